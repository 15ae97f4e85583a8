package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/optml"
	"github.com/sharq-dev/sharq/internal/s3data"
)

// The data phases of an attempt, around its processes: before them, each
// host's /opt/ml tree is written and its channels staged (the job is
// STARTING, its reason counting the bytes); after them, the model and
// outputs of every host are archived to the output path and the checkpoint
// directory saved, and only then is the attempt's end reported, with the
// failure file's text as its reason.

// progressEvery is how often staging reports its bytes.
const progressEvery = time.Second

// writeTrees writes every host's tree: config files, the channels'
// directories (local channels and a checkpoint path in /opt/ml are linked
// to their directories of this machine, or bound there in a container),
// model/ and output/.
func writeTrees(p *plan) error {
	for i, h := range p.spec.Hosts {
		if err := optml.Write(h.Dir, p.req, p.hosts, i); err != nil {
			return err
		}
		if p.inContainers() {
			continue // the container binds them instead
		}
		links := map[string]string{}
		for _, c := range optml.Channels(p.req) {
			if src, ok := optml.LocalPath(c.URI); ok {
				links[filepath.Join(optml.DataDir, c.Name)] = src
			}
		}
		if rel, ok := optml.UnderRoot(optml.CheckpointPath(p.req)); ok {
			links[rel] = p.spec.Checkpoint
		}
		for rel, target := range links {
			at := filepath.Join(h.Dir, rel)
			if err := os.Remove(at); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("link %s: %w", rel, err)
			}
			if err := os.Symlink(target, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// stage writes the trees, restores the checkpoint directory and stages
// the channels that are not local, reporting progress as the reason of
// Starting updates. It runs before the attempt is handed to the
// supervisor, without the attempt's lock, so that Stop can cancel it.
func (e *Executor) stage(ctx context.Context, at *attempt, p *plan) error {
	// An earlier try of this attempt, cut short by a restart, may have
	// left channels (and their staging directories) in the trees.
	removeStaged(p)
	if err := os.MkdirAll(p.spec.Checkpoint, 0o755); err != nil {
		return fmt.Errorf("checkpoint directory: %w", err)
	}
	if err := writeTrees(p); err != nil {
		return fmt.Errorf("write /opt/ml: %w", err)
	}
	if p.inContainers() {
		if err := e.prepareRuntime(ctx, at, p); err != nil {
			return err
		}
	}
	d := p.spec.Data
	if d == nil {
		return nil
	}
	report := func(what string) {
		e.out.Put(executor.Update{AttemptID: at.id, JobID: at.jobID, State: executor.Starting, Reason: what, At: time.Now()})
	}
	if d.CheckpointURI != "" {
		report("Downloading checkpoints from " + d.CheckpointURI)
		if err := e.opts.Data.DownloadDir(ctx, d.CheckpointURI, p.spec.Checkpoint); err != nil {
			return fmt.Errorf("restore checkpoints: %w", err)
		}
	}
	if slices.ContainsFunc(d.Channels, func(c optml.Channel) bool { return !c.Local() }) {
		report("Downloading input data")
	}
	n := len(p.spec.Hosts)
	for i, h := range p.spec.Hosts {
		for _, c := range d.Channels {
			if c.Local() {
				continue
			}
			var last time.Time
			progress := func(pr s3data.Progress) {
				if now := time.Now(); now.Sub(last) >= progressEvery {
					last = now
					report(fmt.Sprintf("Downloading input data: channel %s for %s, %s", c.Name, h.Name, pr))
				}
			}
			ch := s3data.Channel{Name: c.Name, URI: c.URI, DataType: c.DataType, Distribution: c.Distribution, Link: p.linked}
			if err := e.opts.Data.Stage(ctx, ch, i, n, filepath.Join(h.Dir, optml.DataDir, c.Name), progress); err != nil {
				return err
			}
		}
	}
	return nil
}

// prepareRuntime makes sure the image is here (pulling it if it is not),
// and makes the attempt's network.
func (e *Executor) prepareRuntime(ctx context.Context, at *attempt, p *plan) error {
	image := p.ctr[0].Image
	if !e.images.fresh(image) {
		e.out.Put(executor.Update{AttemptID: at.id, JobID: at.jobID, State: executor.Starting, Reason: "Preparing the image " + image, At: time.Now()})
		if err := p.rt.EnsureImage(ctx, image); err != nil {
			return cannotStart("%v", err)
		}
		e.images.seen(image)
	}
	if !p.rt.Overlays() { // podman replaces a container of the name at its run
		for _, name := range p.spec.Containers {
			// A container of an earlier try of this attempt would hold the name.
			if err := p.rt.Remove(ctx, name); err != nil {
				return err
			}
		}
	}
	if p.spec.Network != "" {
		if err := p.rt.CreateNetwork(ctx, p.spec.Network); err != nil {
			return fmt.Errorf("network %s: %w", p.spec.Network, err)
		}
	}
	return nil
}

// imagesSeen remembers which images were found on the machine lately, so
// that a run of jobs of one image asks the runtime once a minute, not once
// a job; an image removed meanwhile fails the job's run with the runtime's
// words.
type imagesSeen struct {
	mu sync.Mutex
	at map[string]time.Time
}

const imageFreshFor = time.Minute

func (s *imagesSeen) fresh(image string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.at[image]) < imageFreshFor
}

func (s *imagesSeen) seen(image string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[string]time.Time{}
	}
	s.at[image] = time.Now()
}

// removeStaged removes what staging left in the trees of an attempt, and
// the overlays' layers over it.
func removeStaged(p *plan) {
	for _, h := range p.spec.Hosts {
		os.RemoveAll(filepath.Join(h.Dir, optml.DataDir))
	}
	if len(p.spec.Hosts) > 0 {
		os.RemoveAll(filepath.Join(filepath.Dir(filepath.Dir(p.spec.Hosts[0].Dir)), "overlay"))
	}
}

// dataOutcome is what the after phase did, kept in state.json so that it
// is done once and a restarted executor reports the same end.
type dataOutcome struct {
	Done     bool   `json:"done"`
	ModelURI string `json:"model_uri,omitempty"`
}

// awaitsOutputs tells whether the ended attempt's outputs are still to be
// sent; the end is reported only once they are.
func awaitsOutputs(spec *launchSpec, st status) bool {
	return spec != nil && (spec.Data != nil || len(spec.Containers) > 0 || hasFailureFile(spec)) && st.ended() && (st.Data == nil || !st.Data.Done)
}

func hasFailureFile(spec *launchSpec) bool {
	for _, h := range spec.Hosts {
		if _, err := os.Stat(filepath.Join(h.Dir, optml.Failure)); err == nil {
			return true
		}
	}
	return false
}

// finishOutputs sends an ended attempt's outputs, then records and reports
// its end: a success whose model cannot be uploaded fails, and a failure
// file's text replaces the end of a failure's reason. It runs without the
// attempt's lock; a Close meanwhile leaves the end unreported, for the next
// executor to finish.
func (e *Executor) finishOutputs(at *attempt, spec *launchSpec) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-e.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	st, err := readStatus(at.dir)
	if err != nil {
		e.log.Error("read attempt state", "attempt", at.id, "err", err)
		e.unfinish(at) // the next check tries again
		return
	}
	end, _ := st.last()
	if failure := failureReason(spec); failure != "" && end.State == executor.Failed {
		head, _, _ := strings.Cut(end.Reason, ": ")
		end.Reason = head + ": " + failure
	}
	// What was stopped is gone only once its containers are: a killed
	// runtime process leaves its container running.
	var problems []string
	if err := e.removeContainers(ctx, spec, end.State); err != nil {
		if e.isClosed() {
			return // the next executor finishes it
		}
		e.log.Error("remove the attempt's containers", "attempt", at.id, "err", err)
		problems = append(problems, "its containers could not be removed: "+err.Error())
	}
	out := &dataOutcome{Done: true}
	ran := slices.ContainsFunc(st.History, func(t transition) bool { return t.State == executor.Running })
	if errs := e.sendOutputs(ctx, at, spec, end.State, ran, out); len(errs) > 0 {
		if e.isClosed() {
			return
		}
		e.log.Warn("send attempt outputs", "attempt", at.id, "errs", errs)
		problems = append(problems, errs...)
	}
	switch {
	case len(problems) == 0:
	case end.State == executor.Succeeded:
		end = transition{State: executor.Failed, Reason: "ClientError: " + strings.Join(problems, "; "), At: end.At}
	default:
		end.Reason += "; " + strings.Join(problems, "; ")
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	if e.isClosed() {
		return
	}
	st.History[len(st.History)-1] = end
	st.Data = out
	if err := writeJSON(at.dir, stateFile, st); err != nil {
		e.log.Error("record attempt end", "attempt", at.id, "err", err)
	}
	e.emitLocked(at, st)
	e.finishLocked(at)
}

// unfinish lets a later check start the after phase again.
func (e *Executor) unfinish(at *attempt) {
	at.mu.Lock()
	at.finishing = false
	at.mu.Unlock()
}

// removeContainers removes the attempt's containers and network. After
// a success every container ended by itself and its runtime removed it
// (run --rm); a container is left only by a stop, a kill or a failure.
func (e *Executor) removeContainers(ctx context.Context, spec *launchSpec, end executor.State) error {
	if len(spec.Containers) == 0 {
		return nil
	}
	if end == executor.Succeeded {
		if spec.Network != "" && e.opts.Runtime != nil {
			return e.opts.Runtime.RemoveNetwork(ctx, spec.Network)
		}
		return nil
	}
	rt := e.opts.Runtime
	if rt == nil {
		return errors.New("the attempt ran in containers, and this server has no container runtime")
	}
	for _, name := range spec.Containers {
		if err := rt.Remove(ctx, name); err != nil {
			return err
		}
	}
	if spec.Network != "" {
		return rt.RemoveNetwork(ctx, spec.Network)
	}
	return nil
}

// sendOutputs saves the checkpoints of any end, and the model and
// output/data of a success (output/data of a failure too, which often
// says why) of an attempt that ran. Its progress goes out as the reason of
// the last state reported, which it does not change.
func (e *Executor) sendOutputs(ctx context.Context, at *attempt, spec *launchSpec, end executor.State, ran bool, out *dataOutcome) []string {
	d := spec.Data
	if d == nil {
		return nil
	}
	at.mu.Lock()
	shown := at.last.State
	at.mu.Unlock()
	report := func(what string) {
		if shown == executor.Starting || shown == executor.Running {
			e.out.Put(executor.Update{AttemptID: at.id, JobID: at.jobID, State: shown, Reason: what, At: time.Now()})
		}
	}
	var errs []string
	if d.CheckpointURI != "" {
		report("Uploading checkpoints to " + d.CheckpointURI)
		if err := e.opts.Data.UploadDir(ctx, d.CheckpointURI, spec.Checkpoint); err != nil {
			errs = append(errs, "saving checkpoints: "+err.Error())
		}
	}
	dirs := func(rel string) []string {
		var out []string
		for _, h := range spec.Hosts {
			out = append(out, filepath.Join(h.Dir, rel))
		}
		return out
	}
	if d.OutputURI != "" && ran && (end == executor.Succeeded || end == executor.Failed) {
		report("Uploading output data to " + d.OutputURI)
		if err := e.opts.Data.UploadArchive(ctx, d.OutputURI, dirs(optml.OutputData), d.Compressed); err != nil {
			errs = append(errs, "uploading output data: "+err.Error())
		}
	}
	if d.ModelURI != "" && end == executor.Succeeded {
		report("Uploading the model to " + d.ModelURI)
		if err := e.opts.Data.UploadArchive(ctx, d.ModelURI, dirs(optml.ModelDir), d.Compressed); err != nil {
			errs = append(errs, "uploading the model: "+err.Error())
		} else {
			out.ModelURI = d.ModelURI
		}
	}
	return errs
}

// failureReason is the failure file of the first host that wrote one.
func failureReason(spec *launchSpec) string {
	for _, h := range spec.Hosts {
		if r := optml.FailureReason(h.Dir); r != "" {
			return r
		}
	}
	return ""
}
