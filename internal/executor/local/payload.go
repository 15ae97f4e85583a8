package local

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// graceEnv is the payload environment variable that overrides the caller's
// grace period.
const graceEnv = trainingjob.StopGraceEnv

// errCannotStart marks payloads that cannot run; the attempt fails with a
// reason instead of Start returning an error.
var errCannotStart = errors.New("CannotStart")

func cannotStart(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCannotStart, fmt.Sprintf(format, args...))
}

// parseJob reads the payload of an attempt run as processes: it runs a
// command, so it must have an entrypoint.
func parseJob(payload []byte) (*trainingjob.Request, error) {
	j, err := trainingjob.Parse(payload)
	if err != nil {
		return nil, cannotStart("%v", err)
	}
	if len(j.AlgorithmSpecification.ContainerEntrypoint) == 0 {
		return nil, cannotStart("%s", noCommand(false))
	}
	return j, nil
}

// CheckSubmit refuses a payload that can never run here: one without a
// command (this executor runs commands, not images), one that names S3
// where this server has none, and one whose command does not exist where
// this executor would look for it: an absolute path that is not an
// executable file, or a name on none of the job's PATH (the server's, or
// the payload's Environment.PATH). A relative path depends on the
// directory the attempt runs in, and a payload the engine refuses anyway
// is left to the engine. The request is only read.
func (e *Executor) CheckSubmit(j *trainingjob.Request) error {
	if e.opts.NoS3 != "" {
		if field := s3Field(j); field != "" {
			return fmt.Errorf("%s is in S3, and %s", field, e.opts.NoS3)
		}
	}
	if e.opts.Runtime != nil && j.AlgorithmSpecification.TrainingImage != "" {
		return nil // the image's own command, or its entrypoint in the image
	}
	if len(j.AlgorithmSpecification.ContainerEntrypoint) == 0 {
		return errors.New(noCommand(e.opts.Runtime != nil))
	}
	cmd := j.AlgorithmSpecification.ContainerEntrypoint[0]
	if !filepath.IsAbs(cmd) && strings.Contains(cmd, "/") {
		return nil
	}
	env := newEnvList(e.opts.Env)
	for _, k := range slices.Sorted(maps.Keys(j.Environment)) {
		env.set(k, j.Environment[k])
	}
	if _, err := lookPath(cmd, env.vars); err != nil {
		where := "on the job's PATH"
		if filepath.IsAbs(cmd) {
			where = "on the server"
		}
		return fmt.Errorf("AlgorithmSpecification.ContainerEntrypoint[0] %q is not an executable file %s", cmd, where)
	}
	return nil
}

// s3Field names the first field of the request that is an s3:// URI.
func s3Field(j *trainingjob.Request) string {
	for i, c := range j.InputDataConfig {
		if s := c.DataSource.S3DataSource; s != nil && strings.HasPrefix(s.S3Uri, "s3://") {
			return fmt.Sprintf("InputDataConfig[%d].DataSource.S3DataSource.S3Uri (channel %s)", i, c.ChannelName)
		}
	}
	if strings.HasPrefix(j.OutputDataConfig.S3OutputPath, "s3://") {
		return "OutputDataConfig.S3OutputPath"
	}
	if strings.HasPrefix(j.CheckpointConfig.S3Uri, "s3://") {
		return "CheckpointConfig.S3Uri"
	}
	return ""
}

// graceOverride returns the payload's grace override, if any.
func graceOverride(j *trainingjob.Request) (*time.Duration, error) {
	d, ok, err := j.StopGrace()
	if err != nil {
		return nil, cannotStart("%s=%q is not a number of seconds", graceEnv, j.Environment[graceEnv])
	}
	if !ok {
		return nil, nil
	}
	return &d, nil
}

// lookPath finds file in the job's PATH (not the executor's), as the
// instance process will.
func lookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		if isExecutable(file) {
			return file, nil
		}
		return "", cannotStart("executable %q not found", file)
	}
	for _, dir := range filepath.SplitList(getenv(env, "PATH")) {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, file); isExecutable(p) {
			return p, nil
		}
	}
	return "", cannotStart("executable %q not found", file)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

func getenv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// envList builds an environment in which a later value replaces an earlier
// one in place.
type envList struct {
	vars []string
	at   map[string]int
}

func newEnvList(base []string) *envList {
	e := &envList{at: make(map[string]int, len(base)+32)}
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		e.set(k, v)
	}
	return e
}

func (e *envList) set(k, v string) {
	if i, ok := e.at[k]; ok {
		e.vars[i] = k + "=" + v
		return
	}
	e.at[k] = len(e.vars)
	e.vars = append(e.vars, k+"="+v)
}
