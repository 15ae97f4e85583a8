package trainingjob

import "testing"

// modelTrainer is the payload the SageMaker Python SDK's ModelTrainer
// submits through TrainingQueue.submit, with one user channel.
const modelTrainer = `{"TrainingJobName":"resnet-20261204120000","RoleArn":"arn:aws:iam::123456789012:role/SageMakerRole",` +
	`"AlgorithmSpecification":{"TrainingImage":"123456789012.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.5-gpu-py311","TrainingInputMode":"File",` +
	`"ContainerEntrypoint":["/bin/bash"],"ContainerArguments":["-c","chmod +x /opt/ml/input/data/sm_drivers/sm_train.sh && /opt/ml/input/data/sm_drivers/sm_train.sh"]},` +
	`"InputDataConfig":[` +
	`{"ChannelName":"train","DataSource":{"S3DataSource":{"S3DataType":"S3Prefix","S3Uri":"s3://data/train/","S3DataDistributionType":"FullyReplicated"}},"InputMode":"File"},` +
	`{"ChannelName":"code","DataSource":{"S3DataSource":{"S3DataType":"S3Prefix","S3Uri":"s3://bucket/resnet/resnet-20261204120000/input/code","S3DataDistributionType":"FullyReplicated"}},"InputMode":"File"},` +
	`{"ChannelName":"sm_drivers","DataSource":{"S3DataSource":{"S3DataType":"S3Prefix","S3Uri":"s3://bucket/resnet/resnet-20261204120000/input/sm_drivers","S3DataDistributionType":"FullyReplicated"}},"InputMode":"File"}],` +
	`"OutputDataConfig":{"S3OutputPath":"s3://bucket/resnet","CompressionType":"GZIP"},` +
	`"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1,"VolumeSizeInGB":30},` +
	`"StoppingCondition":{"MaxRuntimeInSeconds":3600},` +
	`"HyperParameters":{"epochs":"2","optimizer":"\"adam\""},` +
	`"Environment":{"WANDB_MODE":"offline"},` +
	`"CheckpointConfig":{"S3Uri":"s3://bucket/resnet/checkpoints","LocalPath":"/opt/ml/checkpoints"}}`

// BenchmarkParse is the parse a submission of the ModelTrainer payload
// costs.
func BenchmarkParse(b *testing.B) {
	p := []byte(modelTrainer)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(p); err != nil {
			b.Fatal(err)
		}
	}
}

// loadPayload is the payload sharq-load submits, which the fast path reads.
const loadPayload = `{"TrainingJobName":"load-1","RoleArn":"arn:aws:iam::000000000000:role/sharq-load","AlgorithmSpecification":{"TrainingImage":"sharq-load","TrainingInputMode":"File"},"ResourceConfig":{"InstanceType":"ml.m5.large","InstanceCount":1,"VolumeSizeInGB":1},"Environment":{"SHARQ_SIMULATED_RUNTIME_MS":"200"}}`

func BenchmarkParseFast(b *testing.B) {
	p := []byte(loadPayload)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseAndCheck is what a submission's payload costs the engine
// when its demand is not cached: Parse, then CheckSubmission.
func BenchmarkParseAndCheck(b *testing.B) {
	for _, bc := range []struct{ name, payload string }{{"ModelTrainer", modelTrainer}, {"load", loadPayload}} {
		b.Run(bc.name, func(b *testing.B) {
			p := []byte(bc.payload)
			b.ReportAllocs()
			for b.Loop() {
				r, err := Parse(p)
				if err != nil {
					b.Fatal(err)
				}
				if err := r.CheckSubmission(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
