// Package sagemakerapi serves the SageMaker operations that the SageMaker
// Python SDK calls on a training job once AWS Batch has run it:
// DescribeTrainingJob, ListTrainingJobs, StopTrainingJob, ListTags and
// AddTags, in AWS's awsJson1_1 shapes (package awsjson). Any other
// operation is answered UnknownOperationException.
//
// A training job is one attempt of a service job: its name is the
// attempt's (the end of the attempt's serviceResourceId ARN), its status
// follows the attempt as the SageMaker runtime spec lines them up, and its
// request fields (RoleArn, AlgorithmSpecification, ResourceConfig, ...) are
// those of the job's payload, as sent. View is that mapping, shared with
// the CloudWatch Logs operations. It sits on the shell side.
package sagemakerapi
