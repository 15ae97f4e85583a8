package record

import (
	"bytes"
	"math"
	"reflect"
	"testing"
)

// FuzzAppendJob checks that a job Encode writes without reflection is
// written byte for byte as encoding/json writes it.
func FuzzAppendJob(f *testing.F) {
	f.Add("01a236fb-d4a9-7a7f-b467-78f5d2cec30d", "load-1", `{"TrainingJobName":"load-1","ResourceConfig":{"InstanceType":"ml.m5.large"}}`, "s1", "", "RUNNABLE", "", "tok", "01d32cf932b042cf", int64(1796218803369), int64(0), 10, 1.0, uint8(0b0111), uint8(1))
	f.Add("a<b>&c", "é\u2028", "\x00\xff\"\\", "", "x", "FAILED", "Essential container exited", "", "", int64(-5), int64(7), -3, 1e-7, uint8(0xff), uint8(3))
	f.Add("", "", "", "", "", "", "", "", "", int64(0), int64(0), 0, 0.0, uint8(0), uint8(0))
	f.Add("id", "n", "", "", "", "SUCCEEDED", "", "", "", int64(1), int64(1<<62), 1<<40, 2.5e20, uint8(0b1000), uint8(2))
	f.Fuzz(func(t *testing.T, id, name, payload, share, shareID, status, reason, token, hash string, at, ns int64, n int, qty float64, flags, count uint8) {
		if math.IsNaN(qty) || math.IsInf(qty, 0) {
			return // encoding/json refuses them; no record holds them
		}
		j := &Job{
			JobID: id, JobName: name, JobArn: "arn:" + id, JobQueue: "arn:q/" + share, ServiceJobType: "SAGEMAKER_TRAINING",
			SchedulingPriority: n, QuotaShareName: share, ShareIdentifier: shareID, ServiceRequestPayload: payload,
			ClientToken: token, Owner: reason, RequestHash: hash, Status: status, StatusReason: reason,
			CreatedAt: at, ScheduledAt: ns, StartedAt: at ^ ns, StoppedAt: ns / 3, EndedAt: -at,
			IsTerminated: flags&1 != 0, Queue: share + shareID, QueuedAt: ns, Entries: n / 7, AttemptID: hash,
			AttemptSeq: n % 5, DispatchedAt: at * 3, WaitSince: ns % 11,
		}
		if flags&2 != 0 {
			j.CapacityUsage = []CapacityUsage{}
			j.Demand = []UnitCount{}
			j.History = []Transition{}
		}
		for i := range int(count % 4) {
			j.CapacityUsage = append(j.CapacityUsage, CapacityUsage{CapacityUnit: name, Quantity: qty * float64(i)})
			j.Demand = append(j.Demand, UnitCount{Unit: share, Count: n * i})
			j.History = append(j.History, Transition{At: at + int64(i), Status: status, Reason: reason[:min(i, len(reason))]})
		}
		switch flags >> 2 & 7 { // the members left to the encoder
		case 1:
			j.RetryStrategy = &RetryStrategy{Attempts: n}
		case 2:
			j.Tags = map[string]string{name: share}
		case 3:
			j.Attempts = []Attempt{{StartedAt: at}}
		case 4:
			j.WaitFor = []string{id}
		case 5:
			j.Tags = map[string]string{}
		}
		want := encodeReflect(j)
		got, ok := encodeJob(j)
		if !ok {
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("encodeJob =\n%s\nencoding/json:\n%s", got, want)
		}
		if _, err := DecodeJob(got); err != nil {
			t.Fatalf("DecodeJob: %v", err)
		}
	})
}

func TestEncodeJobTakesNewJobs(t *testing.T) {
	j := &Job{JobID: "id", JobName: "load-1", Status: "RUNNABLE", CapacityUsage: []CapacityUsage{{"ml.m5.large", 1}},
		Demand: []UnitCount{{"ml.m5.large", 1}}, History: []Transition{{At: 1, Status: "SUBMITTED"}}}
	if _, ok := encodeJob(j); !ok {
		t.Fatal("encodeJob left a new job to encoding/json")
	}
}

// TestEncodeJobWritesEveryField sets each field of a job in turn, and of
// the structs it holds, and checks that encodeJob writes what the encoder
// writes or leaves the job to it: a field added to Job and not to
// appendJob is not lost from the stored form.
func TestEncodeJobWritesEveryField(t *testing.T) {
	base := Job{JobID: "id", Status: "RUNNABLE", CapacityUsage: []CapacityUsage{{"u", 1}}, Demand: []UnitCount{{"u", 1}}}
	typ := reflect.TypeFor[Job]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		j := base
		fill(reflect.ValueOf(&j).Elem().Field(i))
		got, ok := encodeJob(&j)
		if !ok {
			continue
		}
		if want := encodeReflect(&j); !bytes.Equal(got, want) {
			t.Errorf("with %s set, encodeJob =\n%s\nencoding/json:\n%s", f.Name, got, want)
		}
	}
}

// fill sets v to a value other than its zero, as deep as it goes.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(2.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	}
}
