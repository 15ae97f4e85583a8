package kube

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// termOfPods is the term label of each of the attempt's pods, by name.
func (h *harness) termOfPods(id string) map[string]string {
	out := map[string]string{}
	for _, p := range h.pods(id) {
		out[p.Name] = p.Labels[labelTerm]
		if p.DeletionTimestamp != nil {
			out[p.Name] += " (deleted)"
		}
	}
	return out
}

// serviceTerm is the term label of the attempt's Service.
func (h *harness) serviceTerm(id string) string {
	h.t.Helper()
	s, err := h.cs.CoreV1().Services(h.ns).Get(context.Background(), objectName(executor.Attempt{ID: id, JobName: jobName(id)}), metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return s.Labels[labelTerm]
}

// Ensure an executor fenced by a newer leader's term creates, ends and
// deletes nothing of that leader's attempts, while the newer one claims
// and ends the older one's.
func TestTermFences(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Term = 2 })
	oldOpts := h.opts
	oldOpts.Term = 1
	old, err := New(context.Background(), oldOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	go func() {
		for range old.Updates() {
		}
	}()

	a := newAttempt("newer", "ml.g5.xlarge", 2, nil)
	a.Term = 2
	h.start(a)
	h.wait("newer", executor.Running, wait)
	if got := h.termOfPods("newer"); len(got) != 2 {
		t.Errorf("pods of newer: %v, want two", got)
	}
	for name, term := range h.termOfPods("newer") {
		if term != "2" {
			t.Errorf("pod %s has term %q, want 2", name, term)
		}
	}
	if got := h.serviceTerm("newer"); got != "2" {
		t.Errorf("Service term %q, want 2", got)
	}

	// The older leader may neither start it again nor stop it.
	stale := a
	stale.Term = 1
	if err := old.Start(context.Background(), stale); !errors.Is(err, errSuperseded) {
		t.Errorf("Start under term 1 of an attempt of term 2: %v, want it refused", err)
	}
	if err := old.Stop(context.Background(), "newer", time.Second); !errors.Is(err, errSuperseded) {
		t.Errorf("Stop under term 1 of an attempt of term 2: %v, want it refused", err)
	}

	// An attempt the older leader started is claimed by the newer one
	// when it ends it; the older one can then not end it.
	b := newAttempt("older", "ml.g5.xlarge", 1, nil)
	b.Term = 1
	if err := old.Start(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if got := h.termOfPods("older"); len(got) != 1 {
		t.Fatalf("pods of older: %v, want one", got)
	}
	for name, term := range h.termOfPods("older") {
		if term != "1" {
			t.Errorf("pod %s has term %q, want 1", name, term)
		}
	}
	h.wait("older", executor.Running, wait)
	if err := h.ex.Stop(context.Background(), "older", time.Second); err != nil {
		t.Fatalf("Stop under term 2 of an attempt of term 1: %v", err)
	}
	if got := h.serviceTerm("older"); got != "2" {
		t.Errorf("after the term-2 stop the Service has term %q, want 2 (claimed)", got)
	}
	h.wait("older", executor.Stopped, wait)

	// The older leader's executor alone: the newer attempt's pods lose
	// their Service, but they are not its orphans to delete.
	h.close()
	svc := objectName(executor.Attempt{ID: "newer", JobName: jobName("newer")})
	if err := h.cs.CoreV1().Services(h.ns).Delete(context.Background(), svc, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // the real executor's rounds against the real API server: what it left alone is seen only by waiting
	for name, term := range h.termOfPods("newer") {
		if term != "2" {
			t.Errorf("pod %s: %q after the term-1 executor saw it orphaned, want it untouched (2)", name, term)
		}
	}
	if n := len(h.pods("newer")); n != 2 {
		t.Errorf("%d pods of newer left, want 2", n)
	}
	// An executor of term 2 deletes them.
	h.open()
	testwait.Until(t, wait, func() error {
		if n := len(h.pods("newer")); n != 0 {
			return fmt.Errorf("the term-2 executor left %d orphan pods of its term", n)
		}
		return nil
	})
}

// Ensure a claim made by a newer leader after this executor last looked
// makes its Stop refuse, whether its cache has seen the claim or only the
// API server's test of its patch catches it.
func TestTermClaimRefusesStaleStop(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Term = 2 })
	a := newAttempt("claimed", "ml.g5.xlarge", 1, nil)
	a.Term = 2
	h.start(a)
	h.wait("claimed", executor.Running, wait)
	svc := objectName(executor.Attempt{ID: "claimed", JobName: jobName("claimed")})
	patch := []byte(`[{"op":"replace","path":"` + termPath + `","value":"3"}]`)
	if _, err := h.cs.CoreV1().Services(h.ns).Patch(context.Background(), svc, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.ex.Stop(context.Background(), "claimed", time.Second); !errors.Is(err, errSuperseded) {
		t.Errorf("Stop under term 2 after a claim of term 3: %v, want it refused", err)
	}
	s, err := h.cs.CoreV1().Services(h.ns).Get(context.Background(), svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ended := s.Annotations[annotEnding]; ended || s.Labels[labelTerm] != "3" {
		t.Errorf("Service after the refused stop: term %q, ending %q; want term 3 and no ending", s.Labels[labelTerm], s.Annotations[annotEnding])
	}
	for name, term := range h.termOfPods("claimed") {
		if term != "2" {
			t.Errorf("pod %s: %q, want it running, untouched", name, term)
		}
	}
}
