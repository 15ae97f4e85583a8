#!/usr/bin/env bash
# Drives a running sharq server with the AWS CLI, the way users do: creates
# the walkthrough's resources (walkthrough.md), runs its steps 1 to 3 and
# checks the expected states, lists, reprioritises, terminates, snapshots,
# tags, and deletes everything again, checking every answer.
#
#   e2e/scripts/aws-cli-e2e.sh http://127.0.0.1:8080
#
# The server must have no resources yet. Jobs run `sleep 600` (local
# executor) or until stopped (simulated executor: the payload declares no
# runtime; kube executor on kwok's nodes), so they stay RUNNING until this
# script ends them.
set -euo pipefail

ENDPOINT=${1:?usage: aws-cli-e2e.sh ENDPOINT_URL}

# Any credentials do, unless the server checks them: then E2E_ACCESS_KEY_ID
# and E2E_SECRET_ACCESS_KEY are a key it accepts. Keep the user's AWS
# configuration out of the way.
export AWS_ACCESS_KEY_ID=${E2E_ACCESS_KEY_ID:-e2e} AWS_SECRET_ACCESS_KEY=${E2E_SECRET_ACCESS_KEY:-e2e} AWS_DEFAULT_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_PAGER=
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL AWS_ENDPOINT_URL_BATCH

AWS=$(command -v aws) || { echo "FAIL: the AWS CLI (aws) is not on PATH" >&2; exit 1; }
# A pyenv shim looks the interpreter up again on every call; call the
# real script instead, which is much faster.
if [[ $AWS == */shims/aws ]] && command -v pyenv >/dev/null; then
	AWS=$(pyenv which aws)
fi
PY=$(python3 -c 'import sys; print(sys.executable)') || { echo "FAIL: python3 is not on PATH" >&2; exit 1; }

trap 'echo "FAIL: line $LINENO: $BASH_COMMAND" >&2' ERR

# Checks run Python over the last answer: d is the decoded JSON, names(d)
# the jobName of each job summary.
PYCHECK='
import json, sys
what, expr = sys.argv[1], sys.argv[2]
text = sys.stdin.read()
d = json.loads(text) if text.strip() else None
def names(d): return [j["jobName"] for j in d["jobSummaryList"]]
def front(d, share): return [j["jobArn"] for j in d["frontOfQuotaShares"]["quotaShares"][share]]
def usage(items): return sum(u["quantity"] for u in items if u["capacityUnit"] == "ml.g5.xlarge")
def share_usage(d, share):
    return sum(usage(s["capacityUsage"]) for s in d["queueUtilization"]["quotaShareUtilization"]["topCapacityUtilization"] if s["quotaShareName"] == share)
env = dict(d=d, names=names, front=front, usage=usage, share_usage=share_usage, V=dict(a.split("=", 1) for a in sys.argv[4:]))
try:
    ok = eval(expr, env)
    problem = ""
except Exception as e:
    ok, problem = False, "  error: %r\n" % e
if ok:
    if sys.argv[3] == "say":
        print("   ok:", what)
    sys.exit(0)
if sys.argv[3] == "say":
    print("FAIL: expected %s\n  check: %s\n%s  answer: %s" % (what, expr, problem, json.dumps(d, indent=1)[:4000]), file=sys.stderr)
sys.exit(1)
'

step() { printf '\n== %s\n' "$*"; }

# call OP ARGS...: runs `aws batch OP ARGS...` and keeps its answer in $out.
call() {
	echo "+ aws batch $*"
	if ! out=$("$AWS" batch --endpoint-url "$ENDPOINT" --output json "$@"); then
		echo "FAIL: aws batch $1 failed (its error is above)" >&2
		exit 1
	fi
}

# check WHAT EXPR [NAME=VALUE...]: EXPR must hold for the last answer; the
# values are V["NAME"] in EXPR.
check() {
	local what=$1 expr=$2
	shift 2
	"$PY" -c "$PYCHECK" "$what" "$expr" say "$@" <<<"$out"
}

# await WHAT EXPR [NAME=VALUE...] -- OP ARGS...: calls until EXPR holds, for
# up to a minute.
await() {
	local what=$1 expr=$2 vals=()
	shift 2
	while [[ $1 != -- ]]; do vals+=("$1"); shift; done
	shift
	local deadline=$((SECONDS + 60))
	while :; do
		call "$@"
		if "$PY" -c "$PYCHECK" "$what" "$expr" quiet "${vals[@]}" <<<"$out"; then
			echo "   ok: $what"
			return 0
		fi
		if ((SECONDS >= deadline)); then
			check "$what (waited 60 s)" "$expr" "${vals[@]}"
		fi
	done
}

# get EXPR: prints EXPR of the last answer.
get() { "$PY" -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1" <<<"$out"; }

# fails WHAT TEXT OP ARGS...: the call must fail with an error containing TEXT.
fails() {
	local what=$1 text=$2 err
	shift 2
	echo "+ aws batch $*"
	if err=$("$AWS" batch --endpoint-url "$ENDPOINT" --output json "$@" 2>&1); then
		echo "FAIL: expected $what, but the call succeeded: $err" >&2
		exit 1
	fi
	if [[ $err != *"$text"* ]]; then
		echo "FAIL: expected $what: an error containing \"$text\", got: $err" >&2
		exit 1
	fi
	echo "   ok: $what"
}

QUEUE=my-sm-training-qm-jq
SE=my-sm-training-qm-se
PAYLOAD='{"TrainingJobName":"t","ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1,"VolumeSizeInGB":10},"AlgorithmSpecification":{"TrainingInputMode":"File","TrainingImage":"registry.example/train:1","ContainerEntrypoint":["sleep"],"ContainerArguments":["600"]}}'

# submit NAME SHARE PRIORITY: submits a job; its ARN is in $job.
submit() {
	call submit-service-job --job-name "$1" --job-queue "$QUEUE" --service-job-type SAGEMAKER_TRAINING \
		--quota-share-name "$2" --scheduling-priority "$3" --service-request-payload "$PAYLOAD"
	check "$1 submitted: its name, ID and ARN" 'd["jobName"] == V["name"] and d["jobArn"].endswith(":service-job/" + d["jobId"])' name="$1"
	job=$(get 'd["jobArn"]')
}

step "create the scheduling policy, service environment and job queue"
call create-scheduling-policy --name my-qm-scheduling-policy --quota-share-policy idleResourceAssignmentStrategy=FIFO
check "the policy's ARN" 'd["name"] == "my-qm-scheduling-policy" and d["arn"].startswith("arn:aws:batch:") and d["arn"].endswith(":scheduling-policy/my-qm-scheduling-policy")'
POLICY=$(get 'd["arn"]')
call create-service-environment --service-environment-name "$SE" --service-environment-type SAGEMAKER_TRAINING \
	--state ENABLED --capacity-limits capacityUnit=ml.g5.xlarge,maxCapacity=3
check "the service environment's ARN" 'd["serviceEnvironmentArn"].endswith(":service-environment/my-sm-training-qm-se")'
call create-job-queue --job-queue-name "$QUEUE" --job-queue-type SAGEMAKER_TRAINING --state ENABLED --priority 1 \
	--service-environment-order order=1,serviceEnvironment="$SE" --scheduling-policy-arn "$POLICY"
check "the job queue's ARN" 'd["jobQueueArn"].endswith(":job-queue/my-sm-training-qm-jq")'
QUEUE_ARN=$(get 'd["jobQueueArn"]')
await "the service environment VALID and ENABLED with 3 ml.g5.xlarge" \
	'[(e["status"], e["state"], e["capacityLimits"]) for e in d["serviceEnvironments"]] == [("VALID", "ENABLED", [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 3}])]' \
	-- describe-service-environments --service-environments "$SE"
await "the job queue VALID and ENABLED with the policy and the service environment's ARN" \
	'[(q["status"], q["state"], q["schedulingPolicyArn"], q["serviceEnvironmentOrder"][0]["serviceEnvironment"].endswith(":service-environment/" + V["se"])) for q in d["jobQueues"]] == [("VALID", "ENABLED", V["policy"], True)]' \
	se="$SE" policy="$POLICY" -- describe-job-queues --job-queues "$QUEUE"

step "create the quota shares QS1 (LEND_AND_BORROW 200), QS2 (LEND) and QS3 (RESERVE)"
call create-quota-share --quota-share-name QS1 --job-queue "$QUEUE" --capacity-limits capacityUnit=ml.g5.xlarge,maxCapacity=1 \
	--resource-sharing-configuration strategy=LEND_AND_BORROW,borrowLimit=200 --preemption-configuration inSharePreemption=ENABLED --state ENABLED
check "QS1's ARN under the queue's" 'd["quotaShareArn"] == V["q"] + "/quota-share/QS1"' q="$QUEUE_ARN"
QS1_ARN=$(get 'd["quotaShareArn"]')
call create-quota-share --quota-share-name QS2 --job-queue "$QUEUE" --capacity-limits capacityUnit=ml.g5.xlarge,maxCapacity=1 \
	--resource-sharing-configuration strategy=LEND --preemption-configuration inSharePreemption=DISABLED --state ENABLED
call create-quota-share --quota-share-name QS3 --job-queue "$QUEUE" --capacity-limits capacityUnit=ml.g5.xlarge,maxCapacity=1 \
	--resource-sharing-configuration strategy=RESERVE --preemption-configuration inSharePreemption=DISABLED --state ENABLED
await "the three shares VALID and ENABLED as configured" \
	'sorted((s["quotaShareName"], s["status"], s["state"], s["resourceSharingConfiguration"]["strategy"], s["resourceSharingConfiguration"].get("borrowLimit"), s["preemptionConfiguration"]["inSharePreemption"]) for s in d["quotaShares"]) == [("QS1", "VALID", "ENABLED", "LEND_AND_BORROW", 200, "ENABLED"), ("QS2", "VALID", "ENABLED", "LEND", None, "DISABLED"), ("QS3", "VALID", "ENABLED", "RESERVE", None, "DISABLED")]' \
	-- list-quota-shares --job-queue "$QUEUE"

step "payloads CreateTrainingJob or sharq refuse: a misspelled field, Pipe mode; no job made"
fails "a misspelled ResourceConfig.InstanceType refused, named, with the field meant" \
	'(ClientException) when calling the SubmitServiceJob operation: serviceRequestPayload: unknown field "ResourceConfig.InstanceTyp" (CreateTrainingJob has no such field; did you mean "InstanceType"?)' \
	submit-service-job --job-name refused_misspelled --job-queue "$QUEUE" --service-job-type SAGEMAKER_TRAINING \
	--quota-share-name QS1 --service-request-payload "${PAYLOAD/InstanceType/InstanceTyp}"
fails "Pipe input mode refused" \
	'(ClientException) when calling the SubmitServiceJob operation: serviceRequestPayload: AlgorithmSpecification.TrainingInputMode is Pipe, which sharq does not support; use File or FastFile' \
	submit-service-job --job-name refused_pipe --job-queue "$QUEUE" --service-job-type SAGEMAKER_TRAINING \
	--quota-share-name QS1 --service-request-payload "${PAYLOAD/\"File\"/\"Pipe\"}"
call list-service-jobs --job-queue "$QUEUE" --filters 'name=JOB_NAME,values=refused_*'
check "no job made by the refused submissions" 'd["jobSummaryList"] == []'

step "walkthrough step 1: high and med dispatched (med borrows QS2's instance), low RUNNABLE"
submit qs1_job_high QS1 3
HIGH=$job
submit qs1_job_med QS1 2
MED=$job
submit qs1_job_low QS1 1
LOW=$job
await "qs1_job_high and qs1_job_med RUNNING in QS1" 'sorted(names(d)) == ["qs1_job_high", "qs1_job_med"]' \
	-- list-service-jobs --job-queue "$QUEUE" --job-status RUNNING --filters name=QUOTA_SHARE_NAME,values=QS1
call get-job-queue-snapshot --job-queue "$QUEUE"
check "QS1 using 2 ml.g5.xlarge, 2 of 3 in use, low at the front of QS1, nothing at QS2's and QS3's" \
	'share_usage(d, "QS1") == 2 and usage(d["queueUtilization"]["totalCapacityUsage"]) == 2 and front(d, "QS1") == [V["low"]] and front(d, "QS2") == [] and front(d, "QS3") == []' \
	low="$LOW"

step "walkthrough step 2: qs2_job_1 reclaims QS2's instance from qs1_job_med"
submit qs2_job_1 QS2 1
QS2_JOB=$job
await "qs1_job_high and qs2_job_1 RUNNING" 'sorted(names(d)) == ["qs1_job_high", "qs2_job_1"]' \
	-- list-service-jobs --job-queue "$QUEUE" --job-status RUNNING
call describe-service-job --job-id "$MED"
check "qs1_job_med RUNNABLE, preempted once, with that attempt's reason" \
	'd["status"] == "RUNNABLE" and d["preemptionSummary"]["preemptedAttemptCount"] == 1 and len(d["preemptionSummary"]["recentPreemptedAttempts"]) == 1 and "QS2" in d["preemptionSummary"]["recentPreemptedAttempts"][0]["statusReason"]'

step "walkthrough step 3: qs1_job_low to priority 4 preempts qs1_job_high inside QS1"
call update-service-job --job-id "$LOW" --scheduling-priority 4
check "UpdateServiceJob to answer qs1_job_low's ARN" 'd["jobArn"] == V["low"] and d["jobName"] == "qs1_job_low"' low="$LOW"
await "qs1_job_low and qs2_job_1 RUNNING" 'sorted(names(d)) == ["qs1_job_low", "qs2_job_1"]' \
	-- list-service-jobs --job-queue "$QUEUE" --job-status RUNNING
call describe-service-job --job-id "$HIGH"
check "qs1_job_high RUNNABLE, preempted once" 'd["status"] == "RUNNABLE" and d["preemptionSummary"]["preemptedAttemptCount"] == 1 and d["schedulingPriority"] == 3'
call list-service-jobs --job-queue "$QUEUE" --job-status RUNNABLE --filters name=QUOTA_SHARE_NAME,values=QS1
check "qs1_job_med and qs1_job_high RUNNABLE in QS1, newest first" 'names(d) == ["qs1_job_med", "qs1_job_high"]'
call get-job-queue-snapshot --job-queue "$QUEUE"
check "qs1_job_high at the front of QS1, then qs1_job_med in the queue; QS1 and QS2 use one instance each" \
	'front(d, "QS1") == [V["high"]] and front(d, "QS2") == [] and front(d, "QS3") == [] and [j["jobArn"] for j in d["frontOfQueue"]["jobs"]] == [V["high"], V["med"]] and share_usage(d, "QS1") == 1 and share_usage(d, "QS2") == 1' \
	high="$HIGH" med="$MED"
call list-service-jobs --job-queue "$QUEUE" --filters 'name=JOB_NAME,values=QS1_JOB_*'
check "the JOB_NAME filter (case-insensitive prefix) to list QS1's jobs in every status, newest first" \
	'names(d) == ["qs1_job_low", "qs1_job_med", "qs1_job_high"]'

step "terminate qs2_job_1"
call terminate-service-job --job-id "$QS2_JOB" --reason "walkthrough: done"
await "qs2_job_1 FAILED, terminated, with the reason" \
	'd["status"] == "FAILED" and d.get("isTerminated") is True and d["statusReason"] == "walkthrough: done"' \
	-- describe-service-job --job-id "$QS2_JOB"

step "tags on a quota share"
call tag-resource --resource-arn "$QS1_ARN" --tags team=ml,cost-center=42
call list-tags-for-resource --resource-arn "$QS1_ARN"
check "both tags" 'd["tags"] == {"team": "ml", "cost-center": "42"}'
call untag-resource --resource-arn "$QS1_ARN" --tag-keys cost-center
call list-tags-for-resource --resource-arn "$QS1_ARN"
check "only team left" 'd["tags"] == {"team": "ml"}'

step "delete the quota share, the job queue, the scheduling policy and the service environment"
call update-quota-share --quota-share-arn "$QS1_ARN" --state DISABLED
await "QS1 VALID and DISABLED" 'd["status"] == "VALID" and d["state"] == "DISABLED"' -- describe-quota-share --quota-share-arn "$QS1_ARN"
call delete-quota-share --quota-share-arn "$QS1_ARN"
fails "describing the deleted QS1 to fail with \"does not exist\"" "does not exist" describe-quota-share --quota-share-arn "$QS1_ARN"
call update-job-queue --job-queue "$QUEUE" --state DISABLED
await "the job queue VALID and DISABLED" '[(q["status"], q["state"]) for q in d["jobQueues"]] == [("VALID", "DISABLED")]' \
	-- describe-job-queues --job-queues "$QUEUE"
call delete-job-queue --job-queue "$QUEUE"
await "no job queue left" 'd["jobQueues"] == [] or all(q["status"] == "DELETED" for q in d["jobQueues"])' \
	-- describe-job-queues --job-queues "$QUEUE"
call delete-scheduling-policy --arn "$POLICY"
call update-service-environment --service-environment "$SE" --state DISABLED
call delete-service-environment --service-environment "$SE"
await "no service environment left" 'd["serviceEnvironments"] == [] or all(e["status"] == "DELETED" for e in d["serviceEnvironments"])' \
	-- describe-service-environments

printf '\nPASS: the AWS CLI end-to-end run\n'
