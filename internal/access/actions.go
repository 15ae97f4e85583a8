package access

// The actions routes authorize, and the resource each names. Operations of
// the AWS Batch API use AWS's IAM action names ("batch:" and the
// operation); sharq's own routes use "sharq:" names. A resource is an ARN
// as IAM would match it, or AnyResource for an operation on no one
// resource (listings, describing several at once).
//
//	route                                  action                          resource
//	POST /v1/createschedulingpolicy        batch:CreateSchedulingPolicy    the new policy's ARN
//	POST /v1/updateschedulingpolicy        batch:UpdateSchedulingPolicy    arn
//	POST /v1/deleteschedulingpolicy        batch:DeleteSchedulingPolicy    arn
//	POST /v1/describeschedulingpolicies    batch:DescribeSchedulingPolicies *
//	POST /v1/listschedulingpolicies        batch:ListSchedulingPolicies    *
//	POST /v1/createserviceenvironment      batch:CreateServiceEnvironment  the new environment's ARN
//	POST /v1/updateserviceenvironment      batch:UpdateServiceEnvironment  the environment's ARN
//	POST /v1/deleteserviceenvironment      batch:DeleteServiceEnvironment  the environment's ARN
//	POST /v1/describeserviceenvironments   batch:DescribeServiceEnvironments *
//	POST /v1/createjobqueue                batch:CreateJobQueue            the new queue's ARN
//	POST /v1/updatejobqueue                batch:UpdateJobQueue            the queue's ARN
//	POST /v1/deletejobqueue                batch:DeleteJobQueue            the queue's ARN
//	POST /v1/describejobqueues             batch:DescribeJobQueues         *
//	POST /v1/getjobqueuesnapshot           batch:GetJobQueueSnapshot       the queue's ARN
//	POST /v1/createquotashare              batch:CreateQuotaShare          the new share's ARN
//	POST /v1/updatequotashare              batch:UpdateQuotaShare          quotaShareArn
//	POST /v1/deletequotashare              batch:DeleteQuotaShare          quotaShareArn
//	POST /v1/describequotashare            batch:DescribeQuotaShare        quotaShareArn
//	POST /v1/listquotashares               batch:ListQuotaShares           the queue's ARN
//	POST /v1/submitservicejob              batch:SubmitServiceJob          the quota share's ARN (the queue's without quotaShareName)
//	POST /v1/updateservicejob              batch:UpdateServiceJob          the job's ARN
//	POST /v1/terminateservicejob           batch:TerminateServiceJob       the job's ARN
//	POST /v1/terminateservicejobs          batch:TerminateServiceJob       each job's ARN, once per job (as AWS)
//	POST /v1/describeservicejob            batch:DescribeServiceJob        the job's ARN
//	POST /v1/listservicejobs               batch:ListServiceJobs           the queue's ARN (* without jobQueue)
//	POST /v1/tags/{arn}                    batch:TagResource               arn
//	DELETE /v1/tags/{arn}                  batch:UntagResource             arn
//	GET /v1/tags/{arn}                     batch:ListTagsForResource       arn
//	POST /sharq/v1/dryrun                  sharq:DryRunSubmitServiceJob    as SubmitServiceJob
//	GET /sharq/v1/shares                   sharq:GetShareUsage             *
//	POST /sharq/v1/jobs/positions          sharq:GetJobPositions           *
//	GET /sharq/v1/estimates                sharq:GetStartEstimates         *
//	GET /sharq/v1/jobs/match               sharq:GetJobMatches             *
//	GET /sharq/v1/whoami                   sharq:GetCallerIdentity         *
//	PUT /sharq/v1/queues/{queue}/shares/{share}/settings
//	                                       sharq:UpdateQuotaShareSettings  the quota share's ARN
//	GET /sharq/v1/usage                    sharq:GetUsage                  *
//	GET /sharq/v1/jobs/{job}/events        sharq:GetJobEvents              the job's ARN
//	GET /sharq/v1/jobs/{job}/logs          sharq:GetLogs                   the job's ARN
//	GET /sharq/v1/events                   sharq:GetEvents                 the job's ARN with ?job=, else the share's with ?queue=&share=, the queue's with ?queue=, else *
//	GET /sharq/v1/stream                   sharq:GetConsoleState           *
//	GET /sharq/v1/console/state            sharq:GetConsoleState           *
//	GET /sharq/v1/console/jobs/{job}       sharq:GetJobDetail              the job's ARN
//	POST /sharq/v1/jobs/{job}/priority     batch:UpdateServiceJob          the job's ARN (the same operation as /v1/updateservicejob)
//	POST /sharq/v1/jobs/{job}/terminate    batch:TerminateServiceJob       the job's ARN (the same operation as /v1/terminateservicejob)
//	GET /sharq/v1/access/policies          sharq:ListAccessPolicies        *
//	PUT /sharq/v1/access/policies/{name}   sharq:PutAccessPolicy           arn:aws:iam::<account>:policy/<name>
//	GET /sharq/v1/audit                    sharq:ReadAuditLog              *
//	GET /sharq/v1/access/keys              sharq:ListAccessKeys            *
//	POST /sharq/v1/access/keys             sharq:CreateAccessKey           arn:aws:iam::<account>:user/<name>
//	POST /sharq/v1/access/keys/{id}/disable, /enable
//	                                       sharq:UpdateAccessKey           the key's user ARN (user/* for no such key)
//	DELETE /sharq/v1/access/keys/{id}      sharq:DeleteAccessKey           the key's user ARN (user/* for no such key)
//	GET /metrics                           sharq:GetMetrics                *
//
// The SageMaker, CloudWatch Logs and IAM operations are POSTs to /, told
// apart by X-Amz-Target (or IAM's Action); their actions are the
// service's IAM names:
//
//	SageMaker.DescribeTrainingJob          sagemaker:DescribeTrainingJob   the training job's ARN
//	SageMaker.ListTrainingJobs             sagemaker:ListTrainingJobs      *
//	SageMaker.StopTrainingJob              sagemaker:StopTrainingJob       the training job's ARN, and
//	                                       batch:TerminateServiceJob       its service job's ARN (the same rule as TerminateServiceJob)
//	SageMaker.ListTags                     sagemaker:ListTags              the training job's ARN
//	SageMaker.AddTags                      sagemaker:AddTags               the training job's ARN
//	Logs_20140328.DescribeLogStreams       logs:DescribeLogStreams         arn:aws:logs:<region>:<account>:log-group:<group>
//	Logs_20140328.GetLogEvents             logs:GetLogEvents               arn:aws:logs:<region>:<account>:log-group:<group>:log-stream:<stream>
//
// S3's operations (where sharq serves S3 itself) are told apart by their
// signature's scope, s3; their actions and resources are IAM's for S3, so
// a policy can give a team one bucket, or one prefix of it:
//
//	ListBuckets                            s3:ListAllMyBuckets             *
//	CreateBucket                           s3:CreateBucket                 arn:aws:s3:::<bucket>
//	DeleteBucket                           s3:DeleteBucket                 arn:aws:s3:::<bucket>
//	HeadBucket, ListObjects(V2)            s3:ListBucket                   arn:aws:s3:::<bucket>
//	GetBucketLocation                      s3:GetBucketLocation            arn:aws:s3:::<bucket>
//	GetBucketVersioning                    s3:GetBucketVersioning          arn:aws:s3:::<bucket>
//	ListMultipartUploads                   s3:ListBucketMultipartUploads   arn:aws:s3:::<bucket>
//	GetObject, HeadObject                  s3:GetObject                    arn:aws:s3:::<bucket>/<key>
//	PutObject, CreateMultipartUpload,
//	UploadPart, CompleteMultipartUpload    s3:PutObject                    arn:aws:s3:::<bucket>/<key>
//	CopyObject, UploadPartCopy             s3:PutObject                    arn:aws:s3:::<bucket>/<key>, and
//	                                       s3:GetObject                    the source's arn:aws:s3:::<bucket>/<key>
//	DeleteObject, DeleteObjects (per key)  s3:DeleteObject                 arn:aws:s3:::<bucket>/<key>
//	AbortMultipartUpload                   s3:AbortMultipartUpload         arn:aws:s3:::<bucket>/<key>
//	ListParts                              s3:ListMultipartUploadParts     arn:aws:s3:::<bucket>/<key>
//
// GET /healthz and the console's pages and assets (GET /, /jobs/{job},
// /usage, /assets/) hold no data: they are authenticated but not authorized. A
// path that names no operation is answered 404 without authorization.
const (
	// AnyResource is the resource of an operation on no one resource.
	AnyResource = "*"

	ActionDryRunSubmitServiceJob = "sharq:DryRunSubmitServiceJob"
	ActionGetShareUsage          = "sharq:GetShareUsage"
	ActionGetJobPositions        = "sharq:GetJobPositions"
	ActionGetStartEstimates      = "sharq:GetStartEstimates"
	ActionGetJobMatches          = "sharq:GetJobMatches"
	ActionGetCallerIdentity      = "sharq:GetCallerIdentity"
	ActionGetUsage               = "sharq:GetUsage"
	ActionGetJobEvents           = "sharq:GetJobEvents"
	ActionGetLogs                = "sharq:GetLogs"
	ActionGetEvents              = "sharq:GetEvents"
	ActionGetConsoleState        = "sharq:GetConsoleState"
	ActionGetJobDetail           = "sharq:GetJobDetail"
	ActionGetMetrics             = "sharq:GetMetrics"
	ActionListAccessPolicies     = "sharq:ListAccessPolicies"
	ActionPutAccessPolicy        = "sharq:PutAccessPolicy"
	// ActionUpdateQuotaShareSettings sets sharq's own settings of a quota
	// share (its minimum runtime before preemption).
	ActionUpdateQuotaShareSettings = "sharq:UpdateQuotaShareSettings"
	// ActionReadAuditLog is not a Get: ReadOnlyAccess does not read the
	// audit log.
	ActionReadAuditLog    = "sharq:ReadAuditLog"
	ActionListAccessKeys  = "sharq:ListAccessKeys"
	ActionCreateAccessKey = "sharq:CreateAccessKey"
	ActionUpdateAccessKey = "sharq:UpdateAccessKey"
	ActionDeleteAccessKey = "sharq:DeleteAccessKey"
)

// SageMakerAction is the IAM action of a SageMaker operation:
// "sagemaker:DescribeTrainingJob" for DescribeTrainingJob.
func SageMakerAction(operation string) string { return "sagemaker:" + operation }

// LogsAction is the IAM action of a CloudWatch Logs operation:
// "logs:GetLogEvents" for GetLogEvents.
func LogsAction(operation string) string { return "logs:" + operation }

// BatchAction is the IAM action of an AWS Batch operation:
// "batch:SubmitServiceJob" for SubmitServiceJob.
func BatchAction(operation string) string { return "batch:" + operation }
