package podhost

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/sharq-dev/sharq/internal/optml"
	"github.com/sharq-dev/sharq/internal/s3data"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Arg is the hidden verb of the sharq binary: "sharq __sm stage|run".
const Arg = "__sm"

// Variables the kube executor sets in a pod's containers.
const (
	// SpecEnv holds the host's Spec as JSON (the init container's).
	SpecEnv = "SHARQ_SM_HOST"
	// S3 settings, as sharq serve's --s3-endpoint, --s3-region and
	// --s3-path-style give them.
	EndpointEnv  = "SHARQ_S3_ENDPOINT"
	RegionEnv    = "SHARQ_S3_REGION"
	PathStyleEnv = "SHARQ_S3_PATH_STYLE"
	// Access keys, from the Secret named by --kube-s3-secret.
	AccessKeyEnv = "SHARQ_S3_ACCESS_KEY_ID"
	SecretKeyEnv = "SHARQ_S3_SECRET_ACCESS_KEY"
)

// Defaults of the verbs' flags: where the pod mounts its emptyDirs.
const (
	DefaultBin            = "/opt/sharq"
	DefaultTerminationLog = "/dev/termination-log"
	// BinName and SpecName are the files stage leaves in --bin.
	BinName  = "sharq"
	SpecName = "host.json"
)

// Spec is what one host's pod needs of its attempt.
type Spec struct {
	// Request is the attempt's CreateTrainingJob payload.
	Request json.RawMessage `json:"request"`
	// Hosts are the attempt's hosts, by the names they reach each other
	// by; Index is this one's.
	Hosts []optml.Host `json:"hosts"`
	Index int          `json:"index"`
	// Channels are the channels to stage; those on a volume are mounted
	// instead and are not here.
	Channels []optml.Channel `json:"channels,omitempty"`
	// CheckpointURI is CheckpointConfig.S3Uri.
	CheckpointURI string `json:"checkpointURI,omitempty"`
	// ModelURI and OutputURI are where the hosts' model/ and output/data/ go
	// (optml.ModelURI, OutputURI), Compressed how.
	ModelURI   string `json:"modelURI,omitempty"`
	OutputURI  string `json:"outputURI,omitempty"`
	Compressed bool   `json:"compressed,omitempty"`
	// PartsURI, for several hosts, is the prefix (ending in "/") where
	// the hosts but algo-1 put their model/ and output/data/ for algo-1 to
	// merge (parts.go).
	PartsURI string `json:"partsURI,omitempty"`
}

// Main runs "sharq __sm VERB ARGS..." and returns the exit code.
func Main(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: sharq "+Arg+" stage|run ... (run by the kube executor's pods)")
		return 2
	}
	ctx := context.Background()
	switch args[0] {
	case "stage":
		return StageMain(ctx, args[1:], os.Environ())
	case "run":
		return RunMain(ctx, args[1:], os.Environ())
	}
	fmt.Fprintf(os.Stderr, "sharq %s: unknown verb %q (want stage or run)\n", Arg, args[0])
	return 2
}

// flags are the verbs' common flags.
type flags struct {
	root, bin, spec, termLog string
}

func parse(verb string, args []string) (flags, []string, error) {
	var f flags
	fs := flag.NewFlagSet("sharq "+Arg+" "+verb, flag.ContinueOnError)
	fs.StringVar(&f.root, "root", optml.Root, "the host's /opt/ml tree")
	fs.StringVar(&f.termLog, "termination-log", DefaultTerminationLog, "where the failure goes, as the container's termination message")
	if verb == "stage" {
		fs.StringVar(&f.bin, "bin", "", "copy the sharq binary and the host's spec here for the training container")
	} else {
		fs.StringVar(&f.spec, "spec", filepath.Join(DefaultBin, SpecName), "the host's spec, as stage left it (the "+SpecEnv+" variable, when set, wins)")
	}
	if err := fs.Parse(args); err != nil {
		return f, nil, err
	}
	return f, fs.Args(), nil
}

// readSpec reads the Spec from SpecEnv in env, else from file.
func readSpec(env []string, file string) (*Spec, []byte, error) {
	raw := []byte(lookup(env, SpecEnv))
	if len(raw) == 0 {
		if file == "" {
			return nil, nil, fmt.Errorf("no host spec: %s is not set", SpecEnv)
		}
		var err error
		if raw, err = os.ReadFile(file); err != nil {
			return nil, nil, fmt.Errorf("host spec: %w", err)
		}
	}
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, nil, fmt.Errorf("host spec: %w", err)
	}
	if s.Index < 0 || s.Index >= len(s.Hosts) {
		return nil, nil, fmt.Errorf("host spec: index %d is not within %d hosts", s.Index, len(s.Hosts))
	}
	return &s, raw, nil
}

// lookup is the last value of name in env.
func lookup(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// store is the S3 client the SHARQ_S3_* variables describe, without a
// cache: a pod's disk does not outlive it.
func store(ctx context.Context, env []string) (*s3data.Store, error) {
	c := s3data.Config{Endpoint: lookup(env, EndpointEnv), Region: lookup(env, RegionEnv)}
	c.PathStyle, _ = strconv.ParseBool(lookup(env, PathStyleEnv))
	if id, secret := lookup(env, AccessKeyEnv), lookup(env, SecretKeyEnv); id != "" {
		c.Credentials = credentials.NewStaticCredentialsProvider(id, secret, "")
	}
	return s3data.New(ctx, c)
}

// checkpointDir is where the job's checkpoints are in this file system:
// CheckpointConfig.LocalPath, below root when it lies in /opt/ml.
func checkpointDir(r *trainingjob.Request, root string) string {
	p := optml.CheckpointPath(r)
	if rel, ok := optml.UnderRoot(p); ok {
		return filepath.Join(root, rel)
	}
	return p
}

// terminate writes msg as the container's termination message (and to
// stderr, for the pod's log).
func terminate(path, msg string) {
	fmt.Fprintln(os.Stderr, "sharq: "+msg)
	if path == "" {
		return
	}
	if err := os.WriteFile(path, []byte(msg), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "sharq: write the termination message: %v\n", err)
	}
}

// StageMain is "sharq __sm stage": see the package doc.
func StageMain(ctx context.Context, args, env []string) int {
	return stageMain(ctx, args, env, os.Stdout)
}

// stageMain is StageMain printing its progress to out.
func stageMain(ctx context.Context, args, env []string, out io.Writer) int {
	f, _, err := parse("stage", args)
	if err != nil {
		return 2
	}
	if err := stage(ctx, f, env, out); err != nil {
		terminate(f.termLog, "ClientError: "+err.Error())
		return 1
	}
	return 0
}

// ReasonPrefix begins the lines the stage prints to say what it does
// ("Downloading input data: channel train for algo-1, 1.5 GiB of 4.0 GiB"):
// the kube executor makes its last such line the job's STARTING reason.
const ReasonPrefix = "Downloading "

// stagePrintEvery is how often the stage prints a channel's progress.
const stagePrintEvery = time.Second

func stage(ctx context.Context, f flags, env []string, out io.Writer) error {
	s, raw, err := readSpec(env, "")
	if err != nil {
		return err
	}
	r, err := trainingjob.Parse(s.Request)
	if err != nil {
		return err
	}
	if f.bin != "" {
		if err := copySelf(f.bin, raw); err != nil {
			return err
		}
	}
	if err := optml.Write(f.root, r, s.Hosts, s.Index); err != nil {
		return fmt.Errorf("write /opt/ml: %w", err)
	}
	ckpt := checkpointDir(r, f.root)
	// The job may run as another user than this container.
	for _, d := range []string{filepath.Join(f.root, optml.ModelDir), filepath.Join(f.root, optml.OutputDir),
		filepath.Join(f.root, optml.OutputData), ckpt} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			return err
		}
		if err := os.Chmod(d, 0o777); err != nil {
			return err
		}
	}
	if s.CheckpointURI == "" && len(s.Channels) == 0 {
		return nil
	}
	st, err := store(ctx, env)
	if err != nil {
		return err
	}
	if s.CheckpointURI != "" {
		fmt.Fprintf(out, "Downloading checkpoints from %s\n", s.CheckpointURI)
		if err := st.DownloadDir(ctx, s.CheckpointURI, ckpt); err != nil {
			return fmt.Errorf("restore checkpoints: %w", err)
		}
	}
	host := "algo-" + strconv.Itoa(s.Index+1)
	for _, c := range s.Channels {
		var last time.Time
		progress := func(p s3data.Progress) {
			if now := time.Now(); now.Sub(last) >= stagePrintEvery || p.Done == p.Total {
				last = now
				fmt.Fprintf(out, "Downloading input data: channel %s for %s, %s\n", c.Name, host, p)
			}
		}
		ch := s3data.Channel{Name: c.Name, URI: c.URI, DataType: c.DataType, Distribution: c.Distribution}
		dst := filepath.Join(f.root, optml.DataDir, c.Name)
		if err := st.Stage(ctx, ch, s.Index, len(s.Hosts), dst, progress); err != nil {
			return err
		}
	}
	return nil
}

// copySelf puts this binary and the spec in dir for the training
// container, which runs the binary from there.
func copySelf(dir string, spec []byte) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the sharq binary: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := copyFile(self, filepath.Join(dir, BinName), 0o755); err != nil {
		return fmt.Errorf("copy the sharq binary: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, SpecName), spec, 0o644)
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// errs joins errors as one line: "a; b".
func errs(all []error) string {
	var parts []string
	for _, e := range all {
		parts = append(parts, e.Error())
	}
	return strings.Join(parts, "; ")
}
