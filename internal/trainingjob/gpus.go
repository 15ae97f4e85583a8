package trainingjob

import "maps"

// gpus is the GPU count of one instance of the SageMaker Training instance
// types that have GPUs (NVIDIA's, as SM_NUM_GPUS counts them). Types not
// listed have none: CPU types such as ml.m5.large, and accelerators that are
// not GPUs (Trainium, Inferentia).
var gpus = map[string]int{
	"ml.p3.2xlarge": 1, "ml.p3.8xlarge": 4, "ml.p3.16xlarge": 8, "ml.p3dn.24xlarge": 8,
	"ml.p4d.24xlarge": 8, "ml.p4de.24xlarge": 8,
	"ml.p5.48xlarge": 8, "ml.p5e.48xlarge": 8, "ml.p5en.48xlarge": 8,
	"ml.g4dn.xlarge": 1, "ml.g4dn.2xlarge": 1, "ml.g4dn.4xlarge": 1, "ml.g4dn.8xlarge": 1,
	"ml.g4dn.12xlarge": 4, "ml.g4dn.16xlarge": 1,
	"ml.g5.xlarge": 1, "ml.g5.2xlarge": 1, "ml.g5.4xlarge": 1, "ml.g5.8xlarge": 1, "ml.g5.16xlarge": 1,
	"ml.g5.12xlarge": 4, "ml.g5.24xlarge": 4, "ml.g5.48xlarge": 8,
	"ml.g6.xlarge": 1, "ml.g6.2xlarge": 1, "ml.g6.4xlarge": 1, "ml.g6.8xlarge": 1, "ml.g6.16xlarge": 1,
	"ml.g6.12xlarge": 4, "ml.g6.24xlarge": 4, "ml.g6.48xlarge": 8,
	"ml.g6e.xlarge": 1, "ml.g6e.2xlarge": 1, "ml.g6e.4xlarge": 1, "ml.g6e.8xlarge": 1, "ml.g6e.16xlarge": 1,
	"ml.g6e.12xlarge": 4, "ml.g6e.24xlarge": 4, "ml.g6e.48xlarge": 8,
}

// GPUs is the number of GPUs of one instance of the type; 0 for a type
// without GPUs or one this table does not know.
func GPUs(instanceType string) int { return gpus[instanceType] }

// GPUTable returns a copy of the table of instance types with GPUs, for a
// caller to extend with types of its own.
func GPUTable() map[string]int { return maps.Clone(gpus) }
