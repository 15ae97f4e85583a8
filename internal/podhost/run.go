package podhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/sharq-dev/sharq/internal/optml"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// defaultCommand is what SageMaker runs when the request replaces neither
// the entrypoint nor its arguments: "docker run IMAGE train". A wrapper
// cannot know the image's ENTRYPOINT, so it runs "train" from the image's
// PATH, which is where SageMaker's training toolkit and images made for
// SageMaker put it.
const defaultCommand = "train"

// RunMain is "sharq __sm run": see the package doc.
func RunMain(ctx context.Context, args, env []string) int {
	f, argv, err := parse("run", args)
	if err != nil {
		return 2
	}
	s, _, err := readSpec(env, f.spec)
	if err != nil {
		terminate(f.termLog, "CannotStart: "+err.Error())
		return 1
	}
	r, err := trainingjob.Parse(s.Request)
	if err != nil {
		terminate(f.termLog, "CannotStart: "+err.Error())
		return 1
	}
	if len(argv) == 0 {
		argv = []string{defaultCommand}
	}
	code, stopped, err := runJob(argv, jobEnv(env))
	if err != nil {
		terminate(f.termLog, "CannotStart: "+err.Error())
		return 127
	}
	var failure string
	if code != 0 {
		failure = optml.FailureReason(f.root)
	}
	// A deletion of the pod while algo-1 waits for the other hosts ends
	// the wait; the uploads it can still make go on.
	wait, cancel := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	up := upload(ctx, wait, s, r, f.root, env, code == 0 && !stopped, stopped)
	switch {
	case len(up) > 0 && code == 0:
		code, failure = 1, "ClientError: "+errs(up)
	case len(up) > 0:
		failure = strings.TrimPrefix(failure+"; "+errs(up), "; ")
	}
	if failure != "" {
		terminate(f.termLog, failure)
	}
	return code
}

// jobEnv is the pod's environment without sharq's S3 keys and the spec.
func jobEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k != AccessKeyEnv && k != SecretKeyEnv && k != SpecEnv {
			out = append(out, kv)
		}
	}
	return out
}

// runJob runs argv, forwarding SIGTERM and SIGINT, and returns its exit
// code (128+N for a signal N, as a shell gives) and whether it was told to
// stop.
func runJob(argv, env []string) (code int, stopped bool, err error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, false, fmt.Errorf("run %s: %w", argv[0], err)
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				stop.Store(true)
				cmd.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	var ws syscall.WaitStatus
	if os.Getpid() == 1 {
		ws, err = reapUntil(cmd.Process.Pid)
	} else {
		err = cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			ws, err = exit.Sys().(syscall.WaitStatus), nil
		}
	}
	close(done)
	switch {
	case err != nil:
		return 0, false, err
	case ws.Signaled():
		return 128 + int(ws.Signal()), stop.Load(), nil
	}
	return ws.ExitStatus(), stop.Load(), nil
}

// reapUntil waits for any child until pid exits, and returns its status.
// As a container's first process the wrapper inherits the job's orphans,
// which would otherwise stay zombies: no init reaps them.
func reapUntil(pid int) (syscall.WaitStatus, error) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return ws, fmt.Errorf("wait for the job: %w", err)
		case got == pid:
			return ws, nil
		}
	}
}

// upload sends what outlives the host, as the local executor does after
// an attempt: the checkpoints whatever the end, the output data unless
// the job was stopped, the model only when it succeeded. algo-1 saves the
// checkpoints and makes the archives, with the other hosts' parts when
// there are several (parts.go); wait ends when the pod is being deleted.
func upload(ctx, wait context.Context, s *Spec, r *trainingjob.Request, root string, env []string, succeeded, stopped bool) []error {
	if s.CheckpointURI == "" && s.OutputURI == "" && s.ModelURI == "" {
		return nil
	}
	if s.Index != 0 && (s.PartsURI == "" || stopped) {
		return nil
	}
	st, err := store(ctx, env)
	if err != nil {
		return []error{err}
	}
	if s.Index != 0 {
		return sendPart(ctx, st, s, root, succeeded)
	}
	var out []error
	if s.CheckpointURI != "" {
		fmt.Fprintf(os.Stderr, "sharq: saving checkpoints to %s\n", s.CheckpointURI)
		if err := st.UploadDir(ctx, s.CheckpointURI, checkpointDir(r, root)); err != nil {
			out = append(out, fmt.Errorf("saving checkpoints: %w", err))
		}
	}
	if stopped {
		return out
	}
	hosts := []string{root}
	if s.PartsURI != "" && succeeded {
		tmp, err := os.MkdirTemp("", "sharq-parts-")
		if err != nil {
			return append(out, err)
		}
		defer os.RemoveAll(tmp)
		others, err := gatherParts(ctx, wait, st, s, tmp)
		if err != nil {
			return append(out, fmt.Errorf("uploading the model: the other hosts' parts: %w", err))
		}
		hosts = append(hosts, others...)
	}
	dirs := func(own, part string) []string {
		out := []string{filepath.Join(root, own)}
		for _, h := range hosts[1:] {
			out = append(out, filepath.Join(h, part))
		}
		return out
	}
	if s.OutputURI != "" {
		fmt.Fprintf(os.Stderr, "sharq: uploading output data to %s\n", s.OutputURI)
		if err := st.UploadArchive(ctx, s.OutputURI, dirs(optml.OutputData, "data"), s.Compressed); err != nil {
			out = append(out, fmt.Errorf("uploading output data: %w", err))
		}
	}
	if s.ModelURI != "" && succeeded {
		fmt.Fprintf(os.Stderr, "sharq: uploading the model to %s\n", s.ModelURI)
		if err := st.UploadArchive(ctx, s.ModelURI, dirs(optml.ModelDir, "model"), s.Compressed); err != nil {
			out = append(out, fmt.Errorf("uploading the model: %w", err))
		}
	}
	if len(hosts) > 1 {
		if err := deleteParts(ctx, st, s); err != nil {
			fmt.Fprintf(os.Stderr, "sharq: delete the hosts' parts: %v\n", err)
		}
	}
	return out
}
