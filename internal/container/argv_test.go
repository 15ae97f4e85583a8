package container

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRunArgv(t *testing.T) {
	podman := &Runtime{Name: "podman", Path: "/usr/bin/podman", ExtraArgs: podmanGlobal, RunArgs: podmanRun}
	docker := &Runtime{Name: "docker", Path: "/usr/bin/docker"}
	full := Host{
		Name: "sharq-a1-algo-1", Hostname: "algo-1", Network: "sharq-a1", Image: "localhost/img:1",
		Entrypoint: []string{"python3", "train.py"}, Args: []string{"--epochs", "2"},
		Env:    []string{"TRAINING_JOB_NAME=j", "A=b=c"},
		Mounts: []Mount{{Source: "/d/algo-1", Target: "/opt/ml"}, {Source: "/data", Target: "/opt/ml/input/data/train", ReadOnly: true}},
		GPUs:   []int{0, 2}, CPUs: 1.5, MemoryBytes: 1 << 30, ShmSizeBytes: 1 << 29,
		Labels: map[string]string{LabelAttempt: "a1", "sharq.dev/host": "algo-1"},
	}
	overlaid := full
	overlaid.Mounts = append(full.Mounts[:1:1], Mount{Source: "/d/algo-1/input/data/train", Target: "/opt/ml/input/data/train", Overlay: true})
	for _, tc := range []struct {
		name string
		r    *Runtime
		h    Host
		want string
	}{{
		name: "podman full", r: podman, h: full,
		want: "/usr/bin/podman --runtime runc run --rm --sig-proxy=true --pull never --name sharq-a1-algo-1 --replace" +
			" --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 --hostname algo-1" +
			" --network sharq-a1 --network-alias algo-1 --label sharq.dev/attempt=a1 --label sharq.dev/host=algo-1" +
			" --env TRAINING_JOB_NAME=j --env A=b=c --volume /d/algo-1:/opt/ml --volume /data:/opt/ml/input/data/train:ro" +
			" --device nvidia.com/gpu=0 --device nvidia.com/gpu=2 --cpus 1.5 --memory 1073741824 --shm-size 536870912" +
			" --entrypoint python3 localhost/img:1 train.py --epochs 2",
	}, {
		name: "podman overlay", r: podman, h: overlaid,
		want: "/usr/bin/podman --runtime runc run --rm --sig-proxy=true --pull never --name sharq-a1-algo-1 --replace" +
			" --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 --hostname algo-1" +
			" --network sharq-a1 --network-alias algo-1 --label sharq.dev/attempt=a1 --label sharq.dev/host=algo-1" +
			" --env TRAINING_JOB_NAME=j --env A=b=c --volume /d/algo-1:/opt/ml --volume /d/algo-1/input/data/train:/opt/ml/input/data/train:O" +
			" --device nvidia.com/gpu=0 --device nvidia.com/gpu=2 --cpus 1.5 --memory 1073741824 --shm-size 536870912" +
			" --entrypoint python3 localhost/img:1 train.py --epochs 2",
	}, {
		name: "docker full", r: docker, h: full,
		want: "/usr/bin/docker run --rm --sig-proxy=true --pull never --name sharq-a1-algo-1 --hostname algo-1" +
			" --network sharq-a1 --network-alias algo-1 --label sharq.dev/attempt=a1 --label sharq.dev/host=algo-1" +
			" --env TRAINING_JOB_NAME=j --env A=b=c --volume /d/algo-1:/opt/ml --volume /data:/opt/ml/input/data/train:ro" +
			` --gpus "device=0,2" --cpus 1.5 --memory 1073741824 --shm-size 536870912` +
			" --entrypoint python3 localhost/img:1 train.py --epochs 2",
	}, {
		name: "image entrypoint runs train", r: docker, h: Host{Name: "n", Image: "img"},
		want: "/usr/bin/docker run --rm --sig-proxy=true --pull never --name n img train",
	}, {
		name: "image entrypoint with arguments", r: docker, h: Host{Name: "n", Image: "img", Args: []string{"serve"}},
		want: "/usr/bin/docker run --rm --sig-proxy=true --pull never --name n img serve",
	}, {
		name: "image entrypoint with no arguments", r: docker, h: Host{Name: "n", Image: "img", Args: []string{}},
		want: "/usr/bin/docker run --rm --sig-proxy=true --pull never --name n img",
	}, {
		name: "entrypoint alone", r: docker, h: Host{Name: "n", Image: "img", Entrypoint: []string{"/bin/run"}},
		want: "/usr/bin/docker run --rm --sig-proxy=true --pull never --name n --entrypoint /bin/run img",
	}, {
		name: "no network", r: docker, h: Host{Name: "n", Hostname: "algo-1", Network: "none", Image: "img"},
		want: "/usr/bin/docker run --rm --sig-proxy=true --pull never --name n --hostname algo-1 --network none img train",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.r.RunArgv(tc.h)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, strings.Join(got, " ")); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
		})
	}
}

// Docker has no overlay mounts: a host that asks for one is refused.
func TestRunArgvNoOverlayOnDocker(t *testing.T) {
	h := Host{Name: "n", Image: "img", Mounts: []Mount{{Source: "/a", Target: "/b", Overlay: true}}}
	if _, err := (&Runtime{Name: "docker", Path: "docker"}).RunArgv(h); err == nil || !strings.Contains(err.Error(), "docker has no overlay mounts") {
		t.Errorf("err = %v", err)
	}
}

// The entrypoint's arguments are not appended to the caller's slice.
func TestRunArgvLeavesEntrypointAlone(t *testing.T) {
	ep := make([]string, 2, 8)
	copy(ep, []string{"a", "b"})
	h := Host{Name: "n", Image: "img", Entrypoint: ep, Args: []string{"c"}}
	if _, err := (&Runtime{Name: "podman", Path: "podman"}).RunArgv(h); err != nil {
		t.Fatal(err)
	}
	if got := ep[:3]; got[2] != "" {
		t.Errorf("entrypoint's backing array changed: %q", got)
	}
}

func TestRunArgvRefuses(t *testing.T) {
	r := &Runtime{Name: "podman", Path: "podman"}
	for _, tc := range []struct {
		name string
		h    Host
		want string
	}{
		{"no name", Host{Image: "img"}, "a name and an image are needed"},
		{"no image", Host{Name: "n"}, "a name and an image are needed"},
		{"flag image", Host{Name: "n", Image: "--privileged"}, "starts with '-'"},
		{"empty entrypoint", Host{Name: "n", Image: "i", Entrypoint: []string{}}, "empty entrypoint"},
		{"empty program", Host{Name: "n", Image: "i", Entrypoint: []string{""}}, "program is empty"},
		{"colon in mount", Host{Name: "n", Image: "i", Mounts: []Mount{{Source: "/a:b", Target: "/opt/ml"}}}, "without ':'"},
		{"empty mount", Host{Name: "n", Image: "i", Mounts: []Mount{{Target: "/opt/ml"}}}, "non-empty"},
		{"env without =", Host{Name: "n", Image: "i", Env: []string{"A"}}, "not KEY=value"},
		{"negative GPU", Host{Name: "n", Image: "i", GPUs: []int{-1}}, "GPU index -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.RunArgv(tc.h)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestFind(t *testing.T) {
	if r, err := Find("none"); r != nil || err != nil {
		t.Errorf("Find(none) = %v, %v; want nil, nil", r, err)
	}
	if _, err := Find("rkt"); err == nil || !strings.Contains(err.Error(), "want auto, podman, docker or none") {
		t.Errorf("Find(rkt) err = %v", err)
	}
	if _, err := Find("/nonexistent/podman"); err == nil {
		t.Error("Find of a missing program gave no error")
	}
}

func TestCommandErrorWords(t *testing.T) {
	e := &CommandError{Stderr: "time=x level=warning msg=\"retrying\"\nError: initializing source docker://x: no such host\n"}
	if got, want := e.Words(), "initializing source docker://x: no such host"; got != want {
		t.Errorf("Words() = %q, want %q", got, want)
	}
}
