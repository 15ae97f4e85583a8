package trainingjob

import (
	"errors"
	"reflect"
	"testing"
)

func TestCheckSubmission(t *testing.T) {
	for _, tc := range []struct {
		name, payload, reason string // reason "" when the request passes
	}{
		{"ModelTrainer", modelTrainer, ""},
		{"fields sharq does not read", full, ""},
		{"sharq-load", loadPayload, ""},
		{"user's names in maps", `{"HyperParameters":{"HyperParameter":"1","a.b":"2"},"Environment":{"InstanceTyp":"x"},"Tags":[{"Key":"k","Value":"v"}]}`, ""},
		{"null and values of other types", `{"ResourceConfig":null,"VpcConfig":"x","InputDataConfig":[null],"Tags":{"a":1}}`, ""},
		{"escaped names", `{"Resource\u0043onfig":{"InstanceType":"ml.g5.xlarge"},"Environment":{"\u00e9":"1"}}`, ""},
		{"FastFile", `{"AlgorithmSpecification":{"TrainingInputMode":"FastFile"},"InputDataConfig":[{"InputMode":"File"},{"InputMode":"FastFile"}]}`, ""},
		{"white space", " {\n\t\"RoleArn\" : \"r\" ,\r\n \"ResourceConfig\" : { \"InstanceCount\" : 1 , \"VolumeSizeInGB\" : 1.5e1 } } ", ""},
		{
			"top level", `{"HyperParameter":{"a":"1"}}`,
			`unknown field "HyperParameter" (CreateTrainingJob has no such field; did you mean "HyperParameters"?)`,
		},
		{
			"nested", `{"ResourceConfig":{"InstanceTyp":"ml.g5.xlarge"}}`,
			`unknown field "ResourceConfig.InstanceTyp" (CreateTrainingJob has no such field; did you mean "InstanceType"?)`,
		},
		{
			"in a list", `{"InputDataConfig":[{"ChannelName":"a","DataSource":{"S3DataSource":{"S3Uri":"s3://b/a"}}},{"ChannelName":"b","DataSource":{"S3DataSource":{"S3Url":"s3://b/b"}}}]}`,
			`unknown field "InputDataConfig[1].DataSource.S3DataSource.S3Url" (CreateTrainingJob has no such field; did you mean "S3Uri"?)`,
		},
		{
			"in a list in a list", `{"ResourceConfig":{"InstanceGroups":[{"InstanceGroupName":"g","InstanceType":"ml.g5.xlarge","InstanceCount":1,"Name":"x"}]}}`,
			`unknown field "ResourceConfig.InstanceGroups[0].Name" (CreateTrainingJob has no such field)`,
		},
		{
			"case matters", `{"resourceConfig":{"InstanceType":"ml.g5.xlarge"}}`,
			`unknown field "resourceConfig" (CreateTrainingJob has no such field; did you mean "ResourceConfig"?)`,
		},
		{
			"case matters nested", `{"ResourceConfig":{"instanceType":"ml.g5.xlarge"}}`,
			`unknown field "ResourceConfig.instanceType" (CreateTrainingJob has no such field; did you mean "InstanceType"?)`,
		},
		{
			"made up", `{"TrainingJobName":"a","SharqPriority":3}`,
			`unknown field "SharqPriority" (CreateTrainingJob has no such field)`,
		},
		{
			"a Tag's key", `{"Tags":[{"Key":"k","Values":"v"}]}`,
			`unknown field "Tags[0].Values" (CreateTrainingJob has no such field; did you mean "Value"?)`,
		},
		{
			"after a value skipped", `{"HyperParameters":{"a":{"b":["}",{"c":"]"}]}},"OutputDataConfig":{"S3OutputPath":"s3://b","KmsKey":"k"}}`,
			`unknown field "OutputDataConfig.KmsKey" (CreateTrainingJob has no such field; did you mean "KmsKeyId"?)`,
		},
		{
			"empty name", `{"ResourceConfig":{"":{}}}`,
			`unknown field "ResourceConfig." (CreateTrainingJob has no such field)`,
		},
		{
			"Pipe channel", `{"InputDataConfig":[{"ChannelName":"train","InputMode":"Pipe"}]}`,
			`InputDataConfig[0].InputMode is Pipe, which sharq does not support; use File or FastFile`,
		},
		{
			"Pipe algorithm", `{"AlgorithmSpecification":{"TrainingImage":"i","TrainingInputMode":"Pipe"}}`,
			`AlgorithmSpecification.TrainingInputMode is Pipe, which sharq does not support; use File or FastFile`,
		},
		{
			"Pipe escaped", `{"AlgorithmSpecification":{"TrainingInputMode":"\u0050ipe"}}`,
			`AlgorithmSpecification.TrainingInputMode is Pipe, which sharq does not support; use File or FastFile`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse([]byte(tc.payload))
			if err != nil {
				t.Fatal(err)
			}
			err = r.CheckSubmission()
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("CheckSubmission: %v", err)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Malformed || pe.Reason != tc.reason {
				t.Fatalf("CheckSubmission = %#v, want reason %q", err, tc.reason)
			}
		})
	}
}

// A request built in Go, and one read back from its JSON, pass.
func TestCheckSubmissionBuilt(t *testing.T) {
	r := New("ml.g5.xlarge", 2)
	if err := r.CheckSubmission(); err != nil {
		t.Fatal(err)
	}
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.CheckSubmission(); err != nil {
		t.Fatal(err)
	}
}

func TestNearest(t *testing.T) {
	members := []member{{name: "InstanceType"}, {name: "InstanceCount"}, {name: "VolumeSizeInGB"}}
	for name, want := range map[string]string{
		"InstanceTyp":    "InstanceType",
		"instancecount":  "InstanceCount",
		"VolumeSizeInGb": "VolumeSizeInGB",
		"Instances":      "",
		"VolumeSize":     "VolumeSizeInGB",
		"Instance":       "", // begins two
		"In":             "",
		"X":              "",
		"":               "",
	} {
		if got := nearest(name, members); got != want {
			t.Errorf("nearest(%q) = %q, want %q", name, got, want)
		}
	}
}

// BenchmarkCheckSubmission is what the check adds to a submission of the
// ModelTrainer payload, beyond its parse.
func BenchmarkCheckSubmission(b *testing.B) {
	for _, bc := range []struct{ name, payload string }{{"ModelTrainer", modelTrainer}, {"load", loadPayload}} {
		b.Run(bc.name, func(b *testing.B) {
			r, err := Parse([]byte(bc.payload))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(bc.payload)))
			b.ReportAllocs()
			for b.Loop() {
				if err := r.CheckSubmission(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Every field Request declares, and so every member Marshal writes, is
// one CreateTrainingJob defines: what sharq builds (sharq submit, the
// simulator) passes CheckSubmission.
func TestRequestFieldsDefined(t *testing.T) {
	var walk func(path string, typ reflect.Type, s *shape)
	walk = func(path string, typ reflect.Type, s *shape) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
			if s != nil && s.kind == listShape {
				s = s.elem
			}
		}
		if typ.Kind() != reflect.Struct {
			return
		}
		if s == nil || s.kind != objectShape {
			t.Errorf("%s is a struct in Request, not an object in CreateTrainingJob", path)
			return
		}
		for f := range typ.Fields() {
			if !f.IsExported() {
				continue
			}
			m, ok := s.member([]byte(f.Name))
			if !ok {
				t.Errorf("Request declares %s%s, which CreateTrainingJob does not define", path, f.Name)
				continue
			}
			walk(path+f.Name+".", f.Type, m.shape)
		}
	}
	walk("", reflect.TypeFor[Request](), createTrainingJobInput)
}

// A map whose values are objects (CreateTrainingJob has none today) has
// its values' members checked, under the user's names.
func TestCheckMapOfObjects(t *testing.T) {
	s := &shape{kind: objectShape, members: []member{
		{"M", &shape{kind: mapShape, elem: &shape{kind: objectShape, members: []member{{"A", nil}}}}},
	}}
	w := walker{b: []byte(`{"M":{"any name":{"A":1},"k2":{"A":{"x":1},"B":2}}}`)}
	if w.value(s) || !w.unknown || w.pathString() != "M.k2.B" || w.name != "B" {
		t.Errorf("walker found unknown %v %q at %q", w.unknown, w.name, w.pathString())
	}
	w = walker{b: []byte(`{"M":{"any name":{"A":1}}}`)}
	if !w.value(s) {
		t.Errorf("walker refused a map of valid objects")
	}
}
