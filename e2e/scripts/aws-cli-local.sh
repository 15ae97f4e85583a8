#!/usr/bin/env bash
# The walkthrough's steps 1 to 3 (walkthrough.md) with the AWS CLI against a
# server running the local executor, checking the real processes as well as
# the answers: each dispatched job runs `sleep 600`, a RUNNABLE job runs
# nothing, and a preempted job's sleep exits on SIGTERM (exit code 143, no
# SIGKILL) before its preemptor starts. At the end every job is terminated
# and no process of theirs is left.
#
#   e2e/scripts/aws-cli-local.sh http://127.0.0.1:8080 DATA_DIR
#
# DATA_DIR is the server's --data-dir; the server must have no resources yet.
set -Eeuo pipefail

ENDPOINT=${1:?usage: aws-cli-local.sh ENDPOINT_URL DATA_DIR}
DATA=${2:?usage: aws-cli-local.sh ENDPOINT_URL DATA_DIR}
ATTEMPTS=$DATA/executor/attempts

export AWS_ACCESS_KEY_ID=e2e AWS_SECRET_ACCESS_KEY=e2e AWS_DEFAULT_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_PAGER=
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL AWS_ENDPOINT_URL_BATCH

AWS=$(command -v aws) || { echo "FAIL: the AWS CLI (aws) is not on PATH" >&2; exit 1; }
if [[ $AWS == */shims/aws ]] && command -v pyenv >/dev/null; then
	AWS=$(pyenv which aws) # the shim would look the interpreter up on every call
fi
PY=$(python3 -c 'import sys; print(sys.executable)') || { echo "FAIL: python3 is not on PATH" >&2; exit 1; }

trap 'echo "FAIL: line $LINENO: $BASH_COMMAND" >&2' ERR

# Checks evaluate a Python expression over the last answer d, with:
#   names(d)       the jobName of each job summary
#   procs(job)     the live processes of a job's attempts (their working
#                  directory is under the attempt's directory)
#   ends(job)      the last transition recorded by each of the job's ended
#                  attempts, oldest first
PYCHECK='
import glob, json, os, sys
what, expr, mode, attempts = sys.argv[1:5]
text = sys.stdin.read()
d = json.loads(text) if text.strip() else None
def names(d): return sorted(j["jobName"] for j in d["jobSummaryList"])
def dirs(job): return sorted(glob.glob(os.path.join(attempts, "AWSBatch" + job + "?" * 32)))
def procs(job):
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % p)
            state = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(cwd.startswith(a + "/") for a in dirs(job)):
            out.append(int(p))
    return out
def ends(job):
    out = []
    for a in dirs(job):
        h = json.load(open(os.path.join(a, "state.json")))["history"]
        if h and h[-1]["state"] in ("SUCCEEDED", "FAILED", "STOPPED", "LOST"):
            out.append((h[-1]["state"], h[-1].get("reason", ""), h[-1].get("exit_code", 0)))
    return out
try:
    ok, problem = eval(expr), ""
except Exception as e:
    ok, problem = False, "  error: %r\n" % e
if ok:
    if mode == "say":
        print("   ok:", what)
    sys.exit(0)
if mode == "say":
    print("FAIL: expected %s\n  check: %s\n%s  answer: %s" % (what, expr, problem, json.dumps(d, indent=1)[:3000]), file=sys.stderr)
sys.exit(1)
'

step() { printf '\n== %s\n' "$*"; }

# call OP ARGS...: runs `aws batch OP ARGS...`; its answer is in $out.
call() {
	echo "+ aws batch $*"
	out=$("$AWS" batch --endpoint-url "$ENDPOINT" --output json "$@")
}

# check WHAT EXPR: EXPR must hold for the last answer.
check() { "$PY" -c "$PYCHECK" "$1" "$2" say "$ATTEMPTS" <<<"$out"; }

# await WHAT EXPR [OP ARGS...]: calls until EXPR holds, for up to a minute;
# without a call, re-evaluates EXPR (about processes) alone.
await() {
	local what=$1 expr=$2 deadline=$((SECONDS + 60))
	shift 2
	while :; do
		if (($#)); then call "$@"; else out=; fi
		if "$PY" -c "$PYCHECK" "$what" "$expr" quiet "$ATTEMPTS" <<<"$out"; then
			echo "   ok: $what"
			return 0
		fi
		if ((SECONDS >= deadline)); then
			check "$what (waited 60 s)" "$expr"
		fi
		(($#)) || sleep 0.2
	done
}

QUEUE=my-sm-training-qm-jq
PAYLOAD='{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1,"VolumeSizeInGB":10},"StoppingCondition":{"MaxRuntimeInSeconds":300},"AlgorithmSpecification":{"TrainingInputMode":"File","ContainerEntrypoint":["sleep"],"ContainerArguments":["600"]}}'

# submit NAME SHARE PRIORITY: submits a job; its ARN is in $job.
submit() {
	call submit-service-job --job-name "$1" --job-queue "$QUEUE" --service-job-type SAGEMAKER_TRAINING \
		--quota-share-name "$2" --scheduling-priority "$3" --service-request-payload "$PAYLOAD"
	job=$("$PY" -c 'import json, sys; print(json.load(sys.stdin)["jobArn"])' <<<"$out")
}

# sigterm JOB: the check that the job's preempted attempt ended on SIGTERM,
# before any SIGKILL, and left no process.
sigterm() { echo "ends('$1') and all(e == ('STOPPED', 'Stopped', 143) for e in ends('$1')) and procs('$1') == []"; }

step "set up the walkthrough: 3 ml.g5.xlarge, shares QS1 (LEND_AND_BORROW 200), QS2 (LEND), QS3 (RESERVE)"
call create-scheduling-policy --name my-qm-scheduling-policy --quota-share-policy idleResourceAssignmentStrategy=FIFO
POLICY=$("$PY" -c 'import json, sys; print(json.load(sys.stdin)["arn"])' <<<"$out")
call create-service-environment --service-environment-name my-sm-training-qm-se --service-environment-type SAGEMAKER_TRAINING \
	--capacity-limits capacityUnit=ml.g5.xlarge,maxCapacity=3
call create-job-queue --job-queue-name "$QUEUE" --job-queue-type SAGEMAKER_TRAINING --priority 1 \
	--service-environment-order order=1,serviceEnvironment=my-sm-training-qm-se --scheduling-policy-arn "$POLICY"
call create-quota-share --quota-share-name QS1 --job-queue "$QUEUE" --capacity-limits capacityUnit=ml.g5.xlarge,maxCapacity=1 \
	--resource-sharing-configuration strategy=LEND_AND_BORROW,borrowLimit=200 --preemption-configuration inSharePreemption=ENABLED
call create-quota-share --quota-share-name QS2 --job-queue "$QUEUE" --capacity-limits capacityUnit=ml.g5.xlarge,maxCapacity=1 \
	--resource-sharing-configuration strategy=LEND --preemption-configuration inSharePreemption=DISABLED
call create-quota-share --quota-share-name QS3 --job-queue "$QUEUE" --capacity-limits capacityUnit=ml.g5.xlarge,maxCapacity=1 \
	--resource-sharing-configuration strategy=RESERVE --preemption-configuration inSharePreemption=DISABLED
await "the three shares VALID and ENABLED" \
	'sorted((s["quotaShareName"], s["status"], s["state"]) for s in d["quotaShares"]) == [(q, "VALID", "ENABLED") for q in ("QS1", "QS2", "QS3")]' \
	list-quota-shares --job-queue "$QUEUE"

step "step 1: qs1_job_high and qs1_job_med (borrowing QS2's instance) run sleep 600, qs1_job_low waits"
submit qs1_job_high QS1 3
HIGH=$job
submit qs1_job_med QS1 2
MED=$job
submit qs1_job_low QS1 1
LOW=$job
await "qs1_job_high and qs1_job_med RUNNING" 'names(d) == ["qs1_job_high", "qs1_job_med"]' \
	list-service-jobs --job-queue "$QUEUE" --job-status RUNNING
await "one process each for qs1_job_high and qs1_job_med, none for qs1_job_low" \
	'len(procs("qs1_job_high")) == 1 and len(procs("qs1_job_med")) == 1 and procs("qs1_job_low") == []'

step "step 2: qs2_job_1 reclaims QS2's instance; qs1_job_med's sleep exits on SIGTERM"
submit qs2_job_1 QS2 1
QS2=$job
await "qs1_job_high and qs2_job_1 RUNNING" 'names(d) == ["qs1_job_high", "qs2_job_1"]' \
	list-service-jobs --job-queue "$QUEUE" --job-status RUNNING
call describe-service-job --job-id "$MED"
check "qs1_job_med RUNNABLE, preempted once by QS2" \
	'd["status"] == "RUNNABLE" and d["preemptionSummary"]["preemptedAttemptCount"] == 1 and "QS2" in d["preemptionSummary"]["recentPreemptedAttempts"][0]["statusReason"]'
await "qs1_job_med's process gone after SIGTERM (STOPPED, exit code 143, no SIGKILL)" "$(sigterm qs1_job_med)"
await "one process for qs2_job_1" 'len(procs("qs2_job_1")) == 1'

step "step 3: qs1_job_low raised to 4 preempts qs1_job_high inside QS1"
call update-service-job --job-id "$LOW" --scheduling-priority 4
await "qs1_job_low and qs2_job_1 RUNNING" 'names(d) == ["qs1_job_low", "qs2_job_1"]' \
	list-service-jobs --job-queue "$QUEUE" --job-status RUNNING
call describe-service-job --job-id "$HIGH"
check "qs1_job_high RUNNABLE, preempted once" 'd["status"] == "RUNNABLE" and d["preemptionSummary"]["preemptedAttemptCount"] == 1'
await "qs1_job_high's process gone after SIGTERM (STOPPED, exit code 143, no SIGKILL)" "$(sigterm qs1_job_high)"
await "one process for qs1_job_low, none for qs1_job_med" 'len(procs("qs1_job_low")) == 1 and procs("qs1_job_med") == []'

step "terminate every job"
for j in "$HIGH" "$MED" "$LOW" "$QS2"; do
	call terminate-service-job --job-id "$j" --reason "walkthrough over"
done
await "the four jobs FAILED" 'names(d) == ["qs1_job_high", "qs1_job_low", "qs1_job_med", "qs2_job_1"]' \
	list-service-jobs --job-queue "$QUEUE" --job-status FAILED
await "no process of any job left" 'all(procs(j) == [] for j in ("qs1_job_high", "qs1_job_med", "qs1_job_low", "qs2_job_1"))'

printf '\nPASS: the walkthrough through the AWS CLI with real processes\n'
