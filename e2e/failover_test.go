package e2e

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/sharq-dev/sharq/internal/store/postgres/pgtest"
	"github.com/sharq-dev/sharq/internal/testwait"
)

var failoverKills = flag.Int("failover-kills", 3, "TestFailover: how many times the leader is killed with SIGKILL")

// replicaSet is several `sharq serve` processes on one PostgreSQL store,
// sharing the local executor's directory as servers on one machine do.
type replicaSet struct {
	t       *testing.T
	store   string
	dataDir string
	args    []string // more flags of every replica

	mu       sync.Mutex // guards replicas: submitters read it while a replica is replaced
	replicas []*server
}

// all returns the replicas as they are now.
func (rs *replicaSet) all() []*server {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.replicas)
}

// replace starts a new replica in old's place.
func (rs *replicaSet) replace(old *server) {
	s := rs.start()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.replicas[slices.Index(rs.replicas, old)] = s
}

func startReplicaSet(t *testing.T, n int, args ...string) *replicaSet {
	return startReplicaSetOn(t, pgtest.URL(t), t.TempDir(), n, args...)
}

// startReplicaSetOn starts n replicas on the store, sharing dataDir (and
// so the server key in it).
func startReplicaSetOn(t *testing.T, store, dataDir string, n int, args ...string) *replicaSet {
	rs := &replicaSet{t: t, store: store, dataDir: dataDir, args: args}
	for range n {
		rs.replicas = append(rs.replicas, rs.start())
	}
	return rs
}

func (rs *replicaSet) start() *server {
	return startServer(rs.t, serverOptions{dataDir: rs.dataDir, executor: "local", args: append([]string{"--store", rs.store}, rs.args...)})
}

// leader is the replica whose /readyz answers 200, polled until one does;
// it returns how long that took.
func (rs *replicaSet) leader(timeout time.Duration) (*server, time.Duration) {
	rs.t.Helper()
	began := time.Now()
	c := &http.Client{Timeout: time.Second}
	var lead *server
	testwait.Until(rs.t, timeout, func() error {
		var seen []string
		for _, s := range rs.all() {
			select {
			case <-s.exited:
				seen = append(seen, s.url+" exited")
				continue
			default:
			}
			resp, err := c.Get(s.url + "/readyz")
			if err != nil {
				seen = append(seen, err.Error())
				continue
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				lead = s
				return nil
			}
			seen = append(seen, fmt.Sprintf("%s/readyz: %d", s.url, resp.StatusCode))
		}
		return fmt.Errorf("no replica leads: %s", strings.Join(seen, "; "))
	})
	return lead, time.Since(began)
}

// submitter submits jobs through every replica, each with a clientToken,
// retrying a submission until it is acknowledged: what it acknowledged
// must all be there in the end.
type submitter struct {
	mu    sync.Mutex
	acked map[string]string // clientToken → job ID
	errs  int
}

func (sub *submitter) run(t *testing.T, rs *replicaSet, worker int, stop <-chan struct{}, payloadFor func() string) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		token := fmt.Sprintf("w%d-%d", worker, n)
		in := &batch.SubmitServiceJobInput{JobName: aws.String(token), JobQueue: aws.String(queueName),
			ServiceJobType: types.ServiceJobTypeSagemakerTraining, ServiceRequestPayload: aws.String(payloadFor()),
			QuotaShareName: aws.String("QS1"), SchedulingPriority: aws.Int32(1), ClientToken: aws.String(token)}
		for try := 0; ; try++ {
			all := rs.all()
			s := all[rand.IntN(len(all))]
			out, err := s.client().SubmitServiceJob(t.Context(), in)
			if err == nil {
				sub.mu.Lock()
				sub.acked[token] = aws.ToString(out.JobId)
				sub.mu.Unlock()
				break
			}
			sub.mu.Lock()
			sub.errs++
			sub.mu.Unlock()
			if t.Context().Err() != nil || try > 600 {
				return
			}
			time.Sleep(50 * time.Millisecond) // a client's pause before it tries again, as through a failover
		}
		time.Sleep(300 * time.Millisecond) // about as fast as the jobs run
	}
}

// TestFailover kills the leader of three replicas with SIGKILL several
// times, and pauses it once (SIGSTOP) past its lease, while clients submit
// through all of them: every acknowledged job is kept and runs once, no
// attempt starts twice, and the paused leader, resumed, neither commits
// nor starts anything and stops.
func TestFailover(t *testing.T) {
	rs := startReplicaSet(t, 3)
	lead, _ := rs.leader(60 * time.Second)
	setUpWalkthrough(t, lead.client(), 3)

	// Each attempt notes its name when it starts, in a file all share.
	starts := filepath.Join(rs.dataDir, "starts")
	script := `echo "$TRAINING_JOB_NAME" >> ` + starts + `; sleep 0.05`
	payloadFor := func() string {
		return fmt.Sprintf(`{"AlgorithmSpecification":{"TrainingInputMode":"File","ContainerEntrypoint":["sh","-c",%q]},`+
			`"ResourceConfig":{"InstanceType":%q,"InstanceCount":1}}`, script, g5)
	}
	sub := &submitter{acked: map[string]string{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() { sub.run(t, rs, w, stop, payloadFor) })
	}

	var failovers []time.Duration
	for k := range *failoverKills {
		time.Sleep(2 * time.Second) // the clients submit under this leader before it dies
		lead, _ = rs.leader(30 * time.Second)
		lead.kill() // SIGKILL
		_, took := rs.leader(30 * time.Second)
		failovers = append(failovers, took)
		t.Logf("kill %d: a new leader after %s", k+1, took.Round(time.Millisecond))
		rs.replace(lead)
	}

	// Paused past its lease, then resumed: it must stop without acting.
	time.Sleep(2 * time.Second) // the clients submit under this leader before it is paused
	lead, _ = rs.leader(30 * time.Second)
	paused := lead
	if err := paused.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	others := slices.DeleteFunc(rs.all(), func(s *server) bool { return s == paused })
	took := func() time.Duration {
		rs2 := &replicaSet{t: t, replicas: others}
		_, took := rs2.leader(30 * time.Second)
		return took
	}()
	t.Logf("pause: a new leader after %s", took.Round(time.Millisecond))
	failovers = append(failovers, took)
	time.Sleep(2 * time.Second) // the new leader commits and starts jobs while the old one is still paused
	if err := paused.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-paused.exited:
	case <-time.After(20 * time.Second):
		t.Errorf("the resumed old leader still runs 20 s after it lost its lease")
	}
	if log := paused.log.String(); !strings.Contains(log, "leadership") {
		t.Errorf("the resumed old leader did not say its lease ended:\n%s", log)
	}
	close(stop)
	wg.Wait()

	// Every acknowledged job is there and ends, each with one attempt.
	lead, _ = rs.leader(30 * time.Second)
	c := lead.client()
	sub.mu.Lock()
	acked := sub.acked
	sub.mu.Unlock()
	if len(acked) < 20 {
		t.Fatalf("only %d jobs acknowledged (%d errors)", len(acked), sub.errs)
	}
	ended := map[string]*batch.DescribeServiceJobOutput{} // by clientToken
	testwait.Until(t, 3*time.Minute, func() error {
		for token, id := range acked {
			if ended[token] != nil {
				continue
			}
			d, err := c.DescribeServiceJob(ctx(t), &batch.DescribeServiceJobInput{JobId: aws.String(id)})
			fatalIf(t, "DescribeServiceJob "+token, err)
			if d.Status != types.ServiceJobStatusSucceeded && d.Status != types.ServiceJobStatusFailed {
				return fmt.Errorf("job %s (%s) is still %s (%d of %d jobs ended)", id, token, d.Status, len(ended), len(acked))
			}
			ended[token] = d
		}
		return nil
	})
	for token, id := range acked {
		if d := ended[token]; d.Status != types.ServiceJobStatusSucceeded || len(d.Attempts) != 1 || aws.ToString(d.JobName) != token {
			t.Errorf("job %s (%s): %s with %d attempts (%s)", id, token, d.Status, len(d.Attempts), aws.ToString(d.StatusReason))
		}
	}
	// Each attempt started once.
	f, err := os.Open(starts)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		seen[sc.Text()]++
	}
	for name, n := range seen {
		if n > 1 {
			t.Errorf("attempt %s started %d times", name, n)
		}
	}
	if len(seen) != len(acked) {
		t.Errorf("%d attempts started for %d jobs", len(seen), len(acked))
	}
	slices.Sort(failovers)
	t.Logf("%d jobs acknowledged (%d failed tries retried); failover times: %v (max %s)",
		len(acked), sub.errs, failovers, failovers[len(failovers)-1].Round(time.Millisecond))
	if max := failovers[len(failovers)-1]; max > 10*time.Second {
		t.Errorf("a failover took %s, more than 10 s", max)
	}
}
