package podhost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sharq-dev/sharq/internal/optml"
	"github.com/sharq-dev/sharq/internal/s3data"
)

// A job of several hosts has one model archive, of every host's model/
// merged (later hosts win on a name both hold), as SageMaker and the local
// executor make it; output data likewise. A pod sees only its own host, so
// each host but algo-1 uploads its model/ and output/data/ as files to
// <PartsURI>algo-N/, then a marker, done/<outcome>; algo-1 waits for every
// marker, merges the parts with its own into the archives, and deletes
// the parts.

// pollEvery is how often algo-1 looks for the other hosts' markers.
var pollEvery = time.Second

// partURI is where host i's part goes.
func partURI(s *Spec, i int, what string) string {
	return s.PartsURI + "algo-" + strconv.Itoa(i+1) + "/" + what + "/"
}

// sendPart uploads a host's part and then its marker.
func sendPart(ctx context.Context, st *s3data.Store, s *Spec, root string, succeeded bool) []error {
	fmt.Fprintf(os.Stderr, "sharq: uploading this host's model and output data to %s\n", partURI(s, s.Index, ""))
	outcome := "failed"
	if succeeded {
		outcome = "succeeded"
		if err := st.UploadArchive(ctx, partURI(s, s.Index, "model"), []string{filepath.Join(root, optml.ModelDir)}, false); err != nil {
			return []error{fmt.Errorf("uploading the model: %w", err)}
		}
	}
	if err := st.UploadArchive(ctx, partURI(s, s.Index, "data"), []string{filepath.Join(root, optml.OutputData)}, false); err != nil {
		return []error{fmt.Errorf("uploading output data: %w", err)}
	}
	marker, err := os.MkdirTemp("", "sharq-marker-")
	if err != nil {
		return []error{err}
	}
	defer os.RemoveAll(marker)
	if err := os.WriteFile(filepath.Join(marker, outcome), nil, 0o644); err != nil {
		return []error{err}
	}
	if err := st.UploadArchive(ctx, partURI(s, s.Index, "done"), []string{marker}, false); err != nil {
		return []error{fmt.Errorf("uploading the model: %w", err)}
	}
	return nil
}

// gatherParts waits for every other host's marker and downloads its part
// into dir/algo-N/{model,data}; it gives the hosts' directories in host
// order, algo-2 first. It stops waiting when wait is done (the pod is
// being deleted).
func gatherParts(ctx, wait context.Context, st *s3data.Store, s *Spec, dir string) ([]string, error) {
	var hosts []string
	for i := 1; i < len(s.Hosts); i++ {
		h := filepath.Join(dir, "algo-"+strconv.Itoa(i+1))
		done := filepath.Join(h, "done")
		fmt.Fprintf(os.Stderr, "sharq: waiting for algo-%d's model and output data\n", i+1)
		for {
			if err := st.DownloadDir(wait, partURI(s, i, "done"), done); err != nil {
				return nil, err
			}
			if entries, _ := os.ReadDir(done); len(entries) > 0 {
				break
			}
			select {
			case <-wait.Done():
				return nil, fmt.Errorf("algo-%d uploaded no model: %w", i+1, wait.Err())
			case <-time.After(pollEvery):
			}
		}
		for _, what := range []string{"model", "data"} {
			if err := st.DownloadDir(ctx, partURI(s, i, what), filepath.Join(h, what)); err != nil {
				return nil, err
			}
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

// deleteParts removes the parts once merged.
func deleteParts(ctx context.Context, st *s3data.Store, s *Spec) error {
	empty, err := os.MkdirTemp("", "sharq-empty-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(empty)
	return st.UploadDir(ctx, s.PartsURI, empty)
}
