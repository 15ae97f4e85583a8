#!/usr/bin/env bash
# The AWS Batch quota management announcement's example with the AWS CLI,
# against a sharq server whose local executor runs each job as processes on
# this machine:
#
#   sharq serve &                          # http://127.0.0.1:8080
#   examples/announcement.sh [ENDPOINT]
#
# 1. creates the set-up: a service environment of three ml.g5.xlarge and a
#    job queue with three quota shares of one instance each (QS1
#    LEND_AND_BORROW with in-share preemption, QS2 LEND, QS3 RESERVE);
# 2. submits a job that runs a command and watches it until it ends;
# 3. fills QS1 with three long jobs, raises the priority of the one left
#    waiting, and watches it preempt the lower-priority job that ran;
# 4. terminates the long jobs.
#
# Run it once against a server without these resources.
set -euo pipefail

ENDPOINT=${1:-http://127.0.0.1:8080}
# sharq accepts any credentials.
export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-any} AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-any}
export AWS_DEFAULT_REGION=${AWS_DEFAULT_REGION:-us-east-1} AWS_PAGER=

batch() { aws batch --endpoint-url "$ENDPOINT" "$@"; }

QUEUE=my-sm-training-qm-jq

# watch_job JOB STATE...: prints the job's status as it changes until it is one
# of the given states.
watch_job() {
	local job=$1 last= name status reason
	shift
	while :; do
		read -r name status reason < <(batch describe-service-job --job-id "$job" \
			--query '[jobName, status, statusReason || `""`]' --output text)
		if [[ $status != "$last" ]]; then
			echo "  $name: $status${reason:+ ($reason)}"
			last=$status
		fi
		for want in "$@"; do
			[[ $status == "$want" ]] && return 0
		done
		sleep 1
	done
}

# submit NAME SHARE PRIORITY PAYLOAD: submits a job and prints its ARN.
submit() {
	batch submit-service-job --job-name "$1" --job-queue "$QUEUE" --service-job-type SAGEMAKER_TRAINING \
		--quota-share-name "$2" --scheduling-priority "$3" --service-request-payload "$4" --query jobArn --output text
}

# await_jobs PREFIX EXPECTED: prints the name and status of the jobs whose
# name starts with PREFIX whenever they change, until they read EXPECTED
# ("name STATUS name STATUS ..." in name order).
await_jobs() {
	local prefix=$1 want=$2 last= now
	while :; do
		now=$(batch list-service-jobs --job-queue "$QUEUE" --filters "name=JOB_NAME,values=$prefix*" \
			--query 'sort_by(jobSummaryList, &jobName)[].[jobName, status]' --output text | tr -s '\t\n' '  ')
		now=${now% }
		if [[ $now != "$last" ]]; then
			echo "  $now"
			last=$now
		fi
		[[ $now == "$want" ]] && return 0
		sleep 1
	done
}

echo "== 1. the set-up"
POLICY=$(batch create-scheduling-policy --name my-qm-scheduling-policy \
	--quota-share-policy idleResourceAssignmentStrategy=FIFO --query arn --output text)
batch create-service-environment --service-environment-name my-sm-training-qm-se \
	--service-environment-type SAGEMAKER_TRAINING --capacity-limits capacityUnit=ml.g5.xlarge,maxCapacity=3 >/dev/null
batch create-job-queue --job-queue-name "$QUEUE" --job-queue-type SAGEMAKER_TRAINING --priority 1 \
	--service-environment-order order=1,serviceEnvironment=my-sm-training-qm-se --scheduling-policy-arn "$POLICY" >/dev/null
# QS1: background jobs that checkpoint; lends, borrows up to 200 % of its
# limit, and a higher-priority job preempts a lower one.
batch create-quota-share --quota-share-name QS1 --job-queue "$QUEUE" --capacity-limits capacityUnit=ml.g5.xlarge,maxCapacity=1 \
	--resource-sharing-configuration strategy=LEND_AND_BORROW,borrowLimit=200 \
	--preemption-configuration inSharePreemption=ENABLED >/dev/null
# QS2: medium-priority work that would rather wait than be preempted.
batch create-quota-share --quota-share-name QS2 --job-queue "$QUEUE" --capacity-limits capacityUnit=ml.g5.xlarge,maxCapacity=1 \
	--resource-sharing-configuration strategy=LEND --preemption-configuration inSharePreemption=DISABLED >/dev/null
# QS3: keeps its instance to itself, for work that must not be interrupted.
batch create-quota-share --quota-share-name QS3 --job-queue "$QUEUE" --capacity-limits capacityUnit=ml.g5.xlarge,maxCapacity=1 \
	--resource-sharing-configuration strategy=RESERVE --preemption-configuration inSharePreemption=DISABLED >/dev/null
batch list-quota-shares --job-queue "$QUEUE" \
	--query 'quotaShares[].[quotaShareName, resourceSharingConfiguration.strategy, status, state]' --output text

echo "== 2. a job that runs a command, on QS3's reserved instance"
# The payload is SageMaker's CreateTrainingJob request: the local executor
# runs ContainerEntrypoint with ContainerArguments, and sets the SM_*
# variables of the SageMaker training toolkit.
TRAIN=$(submit train QS3 1 '{
  "ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 10},
  "StoppingCondition": {"MaxRuntimeInSeconds": 600},
  "HyperParameters": {"epochs": "3"},
  "AlgorithmSpecification": {"TrainingInputMode": "File", "ContainerEntrypoint": ["sh", "-c"],
    "ContainerArguments": ["for i in $(seq \"$SM_HP_EPOCHS\"); do echo \"epoch $i on $SM_CURRENT_HOST\"; sleep 1; done; echo weights > \"$SM_MODEL_DIR/model.txt\""]}
}')
echo "submitted $TRAIN"
watch_job "$TRAIN" SUCCEEDED FAILED

echo "== 3. raise a priority: in-share preemption in QS1"
# sleep 600 stands in for a long training run.
LONG='{"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 10},
  "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
  "AlgorithmSpecification": {"TrainingInputMode": "File", "ContainerEntrypoint": ["sleep"], "ContainerArguments": ["600"]}}'
HIGH=$(submit qs1_job_high QS1 3 "$LONG")
MED=$(submit qs1_job_med QS1 2 "$LONG")
LOW=$(submit qs1_job_low QS1 1 "$LONG")
# high runs on QS1's instance, med on the one it borrows from QS2; low waits
# because QS3 lends nothing.
await_jobs qs1_job_ "qs1_job_high RUNNING qs1_job_low RUNNABLE qs1_job_med RUNNING"
batch update-service-job --job-id "$LOW" --scheduling-priority 4 >/dev/null
echo "qs1_job_low's priority raised to 4"
await_jobs qs1_job_ "qs1_job_high RUNNING qs1_job_low RUNNING qs1_job_med RUNNABLE"
batch get-job-queue-snapshot --job-queue "$QUEUE" \
	--query '{front: frontOfQuotaShares.quotaShares, usage: queueUtilization.quotaShareUtilization.topCapacityUtilization}'

echo "== 4. clean up"
for job in "$HIGH" "$MED" "$LOW"; do
	batch terminate-service-job --job-id "$job" --reason "example over"
done
await_jobs qs1_job_ "qs1_job_high FAILED qs1_job_low FAILED qs1_job_med FAILED"
