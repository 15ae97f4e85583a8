package local

import (
	"github.com/sharq-dev/sharq/internal/optml"
)

// An instance that sees its tree at /opt/ml is forked in a mount namespace
// of its own (Go's ForkExec makes the child's mounts private, so nothing
// reaches the machine's), where a shell binds the tree, lays an overlay on
// each channel staged from the cache, and becomes the job's command. The
// shell and mount(8) start in a few milliseconds, where the sharq binary,
// with its packages' initialisation, would take several times that for
// every attempt.
const mountShell = "/bin/sh"

// mountScript's arguments: the tree, then LOWER TARGET SCRATCH for each
// overlay, then --, then the job's command.
const mountScript = `set -e
mount --bind "$1" ` + optml.Root + `
shift
while [ "$1" != -- ]; do
  mkdir -p "$3/upper" "$3/work"
  mount -t overlay overlay -o "lowerdir=$1,upperdir=$3/upper,workdir=$3/work" "$2"
  shift 3
done
shift
exec "$@"`

// overlay is a channel shown at Target under an overlay on Source whose
// writes go to Scratch, so that they never reach Source (staged files hard
// linked from the cache).
type overlay struct {
	Source, Target, Scratch string
}

// mountArgv is the command line that runs argv (path resolved) with the
// tree bound at /opt/ml and the overlays in place: the supervisor forks it
// in a new mount namespace.
func mountArgv(tree, path string, argv []string, overlays []overlay) []string {
	out := []string{"sh", "-c", mountScript, "sharq-mount", tree}
	for _, o := range overlays {
		out = append(out, o.Source, o.Target, o.Scratch)
	}
	out = append(out, "--", path)
	return append(out, argv[1:]...)
}
