package jobevents_test

import (
	"strconv"
	"testing"

	"github.com/sharq-dev/sharq/internal/jobevents"
	"github.com/sharq-dev/sharq/internal/record"
)

func events(from, n int) []jobevents.Event {
	evs := make([]jobevents.Event, n)
	for i := range evs {
		evs[i] = jobevents.Event{ID: "e-" + strconv.Itoa(from+i), At: int64(from + i)}
	}
	return evs
}

// Ensure a subscriber gets what is published while it subscribes, up to
// its buffer, and nothing once cancelled; and that Recent keeps the latest
// RecentSize events, oldest first, however they were published.
func TestBus(t *testing.T) {
	var b jobevents.Bus
	b.Publish(events(0, 3)) // before anyone subscribes
	ch, cancel := b.Subscribe(2)
	b.Publish(events(3, 3))
	for _, want := range []string{"e-3", "e-4"} {
		if ev := <-ch; ev.ID != want {
			t.Fatalf("got %s, want %s", ev.ID, want)
		}
	}
	select {
	case ev := <-ch:
		t.Fatalf("got %s past the buffer", ev.ID)
	default:
	}
	cancel()
	cancel() // twice is harmless
	if _, ok := <-ch; ok {
		t.Fatal("the channel is open after cancel")
	}
	b.Publish(events(6, 1))

	if got := b.Recent(); len(got) != 7 || got[0].ID != "e-0" || got[6].ID != "e-6" {
		t.Fatalf("recent %v", got)
	}
	n := 7
	for _, size := range []int{1, 999, 1500, 3, 2500, 1} {
		b.Publish(events(n, size))
		n += size
		got := b.Recent()
		if len(got) != min(n, jobevents.RecentSize) {
			t.Fatalf("after %d events, %d recent", n, len(got))
		}
		for i, ev := range got {
			if want := n - len(got) + i; ev.At != int64(want) {
				t.Fatalf("after %d events, recent %d is %s, want e-%d", n, i, ev.ID, want)
			}
		}
	}
}

// Ensure a job's events are its transitions after the submission, each
// with the job's status then and without its request.
func TestHistory(t *testing.T) {
	j := &record.Job{JobID: "j", Status: "RUNNING", ServiceRequestPayload: "{}", History: []record.Transition{
		{At: 1, Status: "SUBMITTED"}, {At: 2, Status: "RUNNABLE", Reason: "waiting"}, {At: 3, Status: "RUNNING"}}}
	evs := jobevents.History(j)
	if len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	ev := evs[0]
	if ev.ID != "j-1" || ev.At != 2 || ev.Job.Status != "RUNNABLE" || ev.Job.StatusReason != "waiting" || ev.Job.ServiceRequestPayload != "" {
		t.Fatalf("event %+v", ev)
	}
	if tr := ev.Transition(); tr != (jobevents.Transition{JobID: "j", Status: "RUNNABLE", Reason: "waiting", At: 2}) {
		t.Fatalf("transition %+v", tr)
	}
	if len(jobevents.History(&record.Job{History: j.History[:1]})) != 0 {
		t.Fatal("a submission alone makes an event")
	}
}
