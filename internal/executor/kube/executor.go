package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/sharq-dev/sharq/internal/executor"
)

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("kube executor closed")

// errNotHeld is returned by Start and Stop while this server does not lead.
var errNotHeld = errors.New("kube executor: this server does not hold the lease")

// errSuperseded is returned by Start and Stop for an attempt whose objects
// a leader of a higher term made or claimed.
var errSuperseded = errors.New("kube executor: a leader of a higher term owns the attempt")

// Executor runs attempts as pods. It implements executor.Executor,
// executor.LogReader and executor.InstanceLister, and is a
// prometheus.Collector of its requests to the API server.
type Executor struct {
	opts     Options
	log      *slog.Logger
	cs       kubernetes.Interface
	factory  informers.SharedInformerFactory
	pods     cache.SharedIndexInformer
	svcs     listersv1.ServiceLister
	queue    workqueue.TypedRateLimitingInterface[string]
	out      *executor.Outbox
	requests *requestCounter
	stop     chan struct{}
	wg       sync.WaitGroup

	mu       sync.Mutex
	attempts map[string]*attempt // by namespace/name
	byID     map[string]*attempt
	nsReady  map[string]bool
	closed   bool

	nsMu sync.Mutex // held while a namespace is made
}

// attempt is the executor's view of one attempt.
type attempt struct {
	key, ns, name string
	rec           attemptRecord
	// term is the highest term its objects were seen under.
	term int64

	// mu serialises the attempt's changes, so that its updates go out in
	// the order they happened.
	mu       sync.Mutex
	started  bool      // all its objects exist
	created  time.Time // when its pods were created: by this process, else its Service's creation
	end      *ending
	reported executor.State
	reason   string // of the Starting report: what the pods are doing
	// progress is the last line of a stage's log (stageProgress), read
	// at progressAt from the pod progressOf.
	progress   string
	progressAt time.Time
	progressOf types.UID
	endedAt    time.Time
}

var (
	_ executor.Executor       = (*Executor)(nil)
	_ executor.LogReader      = (*Executor)(nil)
	_ executor.InstanceLister = (*Executor)(nil)
	_ prometheus.Collector    = (*Executor)(nil)
)

const podsByAttempt = "attempt"

// New connects to the API server, fails at once when it cannot be reached,
// and adopts the attempts it finds there (see the package doc).
func New(ctx context.Context, opts Options) (*Executor, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg := *opts.Config
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = float32(opts.QPS), 2*opts.QPS
	}
	requests := newRequestCounter()
	cfg.Wrap(requests.wrap)
	cs, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		return nil, fmt.Errorf("kube executor: %w", err)
	}
	if err := ping(ctx, cs, cfg.Host); err != nil {
		return nil, err
	}
	e := &Executor{
		opts: opts, log: opts.Logger, cs: cs, out: executor.NewOutbox(), requests: requests, stop: make(chan struct{}),
		queue:    workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		attempts: map[string]*attempt{}, byID: map[string]*attempt{}, nsReady: map[string]bool{},
	}
	fopts := []informers.SharedInformerOption{informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = labelManaged + "=" + managedBy + "," + labelInstance + "=" + opts.Instance
	})}
	if opts.fixedNamespace() {
		fopts = append(fopts, informers.WithNamespace(opts.Namespace))
	}
	e.factory = informers.NewSharedInformerFactoryWithOptions(cs, opts.Resync, fopts...)
	e.pods = e.factory.Core().V1().Pods().Informer()
	if err := e.pods.AddIndexers(cache.Indexers{podsByAttempt: func(obj any) ([]string, error) {
		p := obj.(*corev1.Pod)
		return []string{p.Namespace + "/" + p.Labels[labelAttempt]}, nil
	}}); err != nil {
		return nil, err
	}
	svcInformer := e.factory.Core().V1().Services()
	e.svcs = svcInformer.Lister()
	handler := cache.ResourceEventHandlerFuncs{AddFunc: e.enqueue, UpdateFunc: func(_, o any) { e.enqueue(o) }, DeleteFunc: e.enqueue}
	e.pods.AddEventHandler(handler)
	svcInformer.Informer().AddEventHandler(handler)
	e.factory.Start(e.stop)
	for typ, ok := range e.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			close(e.stop)
			return nil, fmt.Errorf("kube executor: list %v: %w", typ, ctx.Err())
		}
	}
	e.adoptAll()
	go e.out.Run(e.stop)
	for range 4 {
		e.wg.Go(e.work)
	}
	return e, nil
}

func ping(ctx context.Context, cs kubernetes.Interface, host string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, err := cs.CoreV1().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return fmt.Errorf("kube executor: cannot reach the Kubernetes API server at %s: %w", host, err)
	}
	return nil
}

// adoptAll knows again the attempts whose Services it finds.
func (e *Executor) adoptAll() {
	svcs, _ := e.svcs.List(labels.Everything())
	for _, s := range svcs {
		e.adopt(s)
	}
}

// adopt reads an attempt from its Service; it returns nil for a Service
// that is not an attempt's.
func (e *Executor) adopt(s *corev1.Service) *attempt {
	var rec attemptRecord
	if json.Unmarshal([]byte(s.Annotations[annotAttempt]), &rec) != nil || rec.ID == "" {
		return nil
	}
	key := s.Namespace + "/" + s.Name
	e.mu.Lock()
	defer e.mu.Unlock()
	if a := e.attempts[key]; a != nil {
		return a
	}
	// Its pods may still be on their way when another executor has just
	// made the Service.
	a := &attempt{key: key, ns: s.Namespace, name: s.Name, rec: rec, started: true, term: termOf(s),
		created: s.CreationTimestamp.Time}
	if v, ok := s.Annotations[annotEnding]; ok {
		var end ending
		if json.Unmarshal([]byte(v), &end) == nil {
			a.end = &end
		}
	}
	e.attempts[key], e.byID[rec.ID] = a, a
	e.queue.Add(key)
	return a
}

func (e *Executor) enqueue(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		e.queue.Add(o.Namespace + "/" + o.Labels[labelAttempt])
	case *corev1.Service:
		e.queue.Add(o.Namespace + "/" + o.Name)
	}
}

// Start creates the attempt's Service and pods; each create is idempotent
// by attempt ID. A payload or table that cannot make pods is a permanent
// error.
func (e *Executor) Start(ctx context.Context, ea executor.Attempt) error {
	s, err := e.opts.build(ea)
	if err != nil {
		return executor.Permanent(err)
	}
	if !e.mayAct() {
		return errNotHeld
	}
	key := s.ns + "/" + s.name
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	a := e.attempts[key]
	if a == nil {
		a = &attempt{key: key, ns: s.ns, name: s.name, rec: s.rec, term: s.term}
		e.attempts[key], e.byID[ea.ID] = a, a
	}
	e.mu.Unlock()

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started || a.end != nil {
		e.seeTerm(a)
		if above(a.term, s.term) {
			return errSuperseded
		}
		return nil
	}
	if err := e.create(ctx, a, s); err != nil {
		switch {
		case errors.Is(err, errSuperseded):
			// Not ours to run: known again from its Service, unchanged.
			e.mu.Lock()
			delete(e.attempts, key)
			delete(e.byID, ea.ID)
			e.mu.Unlock()
			e.queue.Add(key)
		case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
			e.forget(a)
			return executor.Permanent(err)
		}
		return err
	}
	a.started, a.created = true, time.Now()
	e.queue.Add(key)
	return nil
}

// create makes the attempt's Service and pods under s.term. Objects that
// exist already are the attempt's own (names are by attempt ID): one of a
// higher term means a newer leader has it, and nothing is created; a
// Service of a lower term is claimed first.
func (e *Executor) create(ctx context.Context, a *attempt, s *spec) error {
	if err := e.ensureNamespace(ctx, s.ns); err != nil {
		return err
	}
	svc, err := e.cs.CoreV1().Services(s.ns).Create(ctx, s.svc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		svc, err = e.cs.CoreV1().Services(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		if err == nil {
			a.term = termOf(svc)
			if a.term < s.term {
				if err := e.patchService(ctx, a, s.term, nil); err != nil && !errors.Is(err, errSuperseded) {
					// Not the spec's fault: no permanent error.
					return fmt.Errorf("claim service %s/%s: %v", s.ns, s.name, err)
				}
			}
		}
	}
	if err != nil {
		return fmt.Errorf("create service %s/%s: %w", s.ns, s.name, err)
	}
	if above(a.term, s.term) {
		return errSuperseded
	}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID}
	for _, p := range s.pods {
		p.OwnerReferences = []metav1.OwnerReference{owner}
		_, err := e.cs.CoreV1().Pods(s.ns).Create(ctx, p, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var old *corev1.Pod
			if old, err = e.cs.CoreV1().Pods(s.ns).Get(ctx, p.Name, metav1.GetOptions{}); err == nil && above(termOf(old), s.term) {
				return errSuperseded
			}
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("create pod %s/%s: %w", s.ns, p.Name, err)
		}
	}
	return nil
}

// fenced tells whether objects of term belong to a newer leader than this
// executor's.
func (e *Executor) fenced(term int64) bool { return above(term, e.opts.Term) }

// above tells whether term is higher than own, when own is a term (0: a
// server alone on its store, which fences nothing).
func above(term, own int64) bool { return own > 0 && term > own }

// seeTerm raises the attempt's term to its Service's in the cache. The
// caller holds a.mu.
func (e *Executor) seeTerm(a *attempt) {
	if s, err := e.svcs.Services(a.ns).Get(a.name); err == nil {
		a.term = max(a.term, termOf(s))
	}
}

// patchService sets annotations on the attempt's Service and claims it for
// term when that is higher than the Service's. With fencing on, the patch
// holds only while the Service's term label is still the one this executor
// saw (a JSON patch test, checked by the API server): a newer leader's
// claim in between makes it fail with errSuperseded. The caller holds a.mu.
func (e *Executor) patchService(ctx context.Context, a *attempt, term int64, annotations map[string]string) error {
	seen, labelled := strconv.FormatInt(a.term, 10), true
	if s, err := e.svcs.Services(a.ns).Get(a.name); err == nil {
		seen, labelled = s.Labels[labelTerm]
		a.term = max(a.term, termOf(s))
	}
	for try := 0; ; try++ {
		if e.fenced(a.term) || above(a.term, term) {
			return errSuperseded
		}
		var ops []map[string]any
		switch raise := term > a.term || (!labelled && term > 0); {
		case !labelled && raise:
			ops = append(ops, map[string]any{"op": "add", "path": termPath, "value": strconv.FormatInt(term, 10)})
		case labelled && (raise || e.opts.Term > 0):
			ops = append(ops, map[string]any{"op": "test", "path": termPath, "value": seen})
			if raise {
				ops = append(ops, map[string]any{"op": "replace", "path": termPath, "value": strconv.FormatInt(term, 10)})
			}
		}
		for k, v := range annotations {
			ops = append(ops, map[string]any{"op": "add", "path": "/metadata/annotations/" + escapePointer(k), "value": v})
		}
		if len(ops) == 0 {
			return nil
		}
		patch, _ := json.Marshal(ops)
		_, err := e.cs.CoreV1().Services(a.ns).Patch(ctx, a.name, types.JSONPatchType, patch, metav1.PatchOptions{})
		if err == nil {
			a.term = max(a.term, term)
			return nil
		}
		if apierrors.IsNotFound(err) || try == 2 {
			return err
		}
		// The test may have failed: see the label as it is now.
		s, gerr := e.cs.CoreV1().Services(a.ns).Get(ctx, a.name, metav1.GetOptions{})
		if gerr != nil {
			return err
		}
		now, ok := s.Labels[labelTerm]
		if now == seen && ok == labelled {
			return err // not the test
		}
		a.term, seen, labelled = termOf(s), now, ok
	}
}

// termPath is the JSON pointer to the term label.
var termPath = "/metadata/labels/" + escapePointer(labelTerm)

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// ensureNamespace creates a missing namespace once; a namespace sharq may
// not create must exist already.
func (e *Executor) ensureNamespace(ctx context.Context, ns string) error {
	e.mu.Lock()
	ready := e.nsReady[ns]
	e.mu.Unlock()
	if ready {
		return nil
	}
	// One create for the many starts that find a new namespace at once.
	e.nsMu.Lock()
	defer e.nsMu.Unlock()
	e.mu.Lock()
	ready = e.nsReady[ns]
	e.mu.Unlock()
	if ready {
		return nil
	}
	_, err := e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	e.mu.Lock()
	e.nsReady[ns] = true
	e.mu.Unlock()
	return nil
}

// forget drops an attempt that could not start, and what of it exists.
func (e *Executor) forget(a *attempt) {
	e.mu.Lock()
	delete(e.attempts, a.key)
	delete(e.byID, a.rec.ID)
	e.mu.Unlock()
	e.deleteObjects(context.Background(), a)
}

// Stop deletes the attempt's pods with the grace period (the payload's
// SHARQ_STOP_GRACE_SECONDS if set); the attempt reports Stopped once they
// are gone.
func (e *Executor) Stop(ctx context.Context, attemptID string, grace time.Duration) error {
	e.mu.Lock()
	a := e.byID[attemptID]
	e.mu.Unlock()
	if a == nil {
		return nil
	}
	if !e.mayAct() {
		return errNotHeld
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reported.Terminal() {
		return nil
	}
	e.seeTerm(a)
	if e.fenced(a.term) {
		return errSuperseded
	}
	if a.rec.GraceSet {
		grace = a.rec.Grace
	}
	end := a.end
	if end == nil {
		end = &ending{State: executor.Stopped, Reason: "Stopped", ExitCode: -1, At: time.Now(), Grace: grace}
	}
	return e.beginEnd(ctx, a, end)
}

// beginEnd records the ending on the Service, claiming it for this
// executor's term, then deletes the pods with its grace period. The caller
// holds a.mu.
func (e *Executor) beginEnd(ctx context.Context, a *attempt, end *ending) error {
	b, _ := json.Marshal(end)
	err := e.patchService(ctx, a, e.opts.Term, map[string]string{annotEnding: string(b)})
	if errors.Is(err, errSuperseded) {
		return err
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("record end of %s: %w", a.rec.ID, err)
	}
	a.end = end
	if err := e.deletePods(ctx, a, end.Grace); err != nil {
		return err
	}
	e.queue.Add(a.key)
	return nil
}

// deletePods deletes the attempt's pods that still run with grace.
func (e *Executor) deletePods(ctx context.Context, a *attempt, grace time.Duration) error {
	secs := int64(math.Ceil(grace.Seconds()))
	for _, p := range e.podsOf(a) {
		if p == nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || e.fenced(termOf(p)) {
			continue
		}
		if p.DeletionTimestamp != nil && p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds <= secs {
			continue
		}
		err := e.cs.CoreV1().Pods(a.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &secs,
			Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete pod %s/%s: %w", a.ns, p.Name, err)
		}
	}
	return nil
}

// podsOf lists the attempt's pods from the cache, by host index.
func (e *Executor) podsOf(a *attempt) []*corev1.Pod {
	pods := make([]*corev1.Pod, a.rec.Hosts)
	objs, _ := e.pods.GetIndexer().ByIndex(podsByAttempt, a.key)
	for _, o := range objs {
		p := o.(*corev1.Pod)
		var i int
		if _, err := fmt.Sscanf(p.Labels[labelHost], "algo-%d", &i); err == nil && i >= 1 && i <= len(pods) {
			pods[i-1] = p
		}
	}
	return pods
}

func (e *Executor) mayAct() bool { return e.opts.Held == nil || e.opts.Held() }

// Updates delivers the attempts' changes of state.
func (e *Executor) Updates() <-chan executor.Update { return e.out.Updates() }

// Attempts lists the attempts found on the cluster with their state.
func (e *Executor) Attempts(ctx context.Context) ([]executor.Update, error) {
	e.mu.Lock()
	all := make([]*attempt, 0, len(e.attempts))
	for _, a := range e.attempts {
		all = append(all, a)
	}
	e.mu.Unlock()
	var out []executor.Update
	now := time.Now()
	for _, a := range all {
		a.mu.Lock()
		u := executor.Update{AttemptID: a.rec.ID, JobID: a.rec.JobID, State: a.reported, At: now}
		if u.State == "" {
			v := judge(a.rec, a.end, e.podsOf(a), false, now, e.opts)
			u.State, u.Reason, u.ExitCode = v.state, v.reason, v.exitCode
			if u.State == "" {
				u.State = executor.Running // ending: its update follows
			}
		}
		a.mu.Unlock()
		out = append(out, u)
	}
	return out, nil
}

// Close stops watching; pods keep running.
func (e *Executor) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	e.queue.ShutDown()
	close(e.stop)
	e.wg.Wait()
	e.factory.Shutdown()
	return nil
}
