package local

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Ensure channels map file:// URIs, absolute paths and file-system data
// sources to local directories, and leave S3 channels out.
func TestChannels(t *testing.T) {
	j, err := parseJob([]byte(`{
		"AlgorithmSpecification": {"ContainerEntrypoint": ["true"]},
		"InputDataConfig": [
			{"ChannelName": "train", "DataSource": {"S3DataSource": {"S3Uri": "file:///data/train"}}},
			{"ChannelName": "plain", "DataSource": {"S3DataSource": {"S3Uri": "/data/plain"}}},
			{"ChannelName": "fsx", "DataSource": {"FileSystemDataSource": {"FileSystemId": "fs-1", "FileSystemType": "FSxLustre", "DirectoryPath": "/fsx/data"}}},
			{"ChannelName": "remote", "DataSource": {"S3DataSource": {"S3Uri": "s3://bucket/prefix"}}}
		]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"train": "/data/train", "plain": "/data/plain", "fsx": "/fsx/data"}
	if diff := cmp.Diff(want, channels(j)); diff != "" {
		t.Errorf("channels (-want +got):\n%s", diff)
	}
}

// Ensure the timeout is the shorter of the attempt's and the payload's.
func TestTimeoutChoice(t *testing.T) {
	tests := map[string]struct {
		attempt, want int64 // seconds
		maxRuntime    int64
	}{
		"None":        {0, 0, 0},
		"AttemptOnly": {5, 5, 0},
		"PayloadOnly": {0, 7, 7},
		"Shorter":     {5, 3, 3},
		"AttemptWins": {2, 2, 9},
	}
	for name, tc := range tests {
		if got := timeout(secs(tc.attempt), tc.maxRuntime); got != secs(tc.want) {
			t.Errorf("%s: got %s, want %ds", name, got, tc.want)
		}
	}
}

func secs(n int64) time.Duration { return time.Duration(n) * time.Second }
