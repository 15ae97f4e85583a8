#!/usr/bin/env python3
"""What the SageMaker Python SDK's ModelTrainer and aws_batch.TrainingQueue
do, through boto3, against sharq (AWS Batch) and an S3 server: create the
bucket, upload the sm_drivers and code channels and the data, submit the
training job as a service job, poll it to its end and read its model back.

  trainer.py SCENARIO --batch URL --s3 URL --mark MARK --bucket NAME --work DIR [--checkpoints DIR]

SCENARIO is flow, failure, two-hosts or checkpoint. Each sets up its own
queue on a fresh server, checks what the SDK's user would see and exits 1
with FAIL: ... when something is wrong; its last line is RESULT and a JSON
object for the Go test's own checks. MARK goes into every job's
Environment as SHARQ_E2E_MARK=MARK/<job name>, which tells the test which
processes are the job's.
"""
import argparse
import io
import json
import os
import re
import shutil
import sys
import tarfile
import time
import urllib.parse

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

HERE = os.path.dirname(os.path.abspath(__file__))
REGION = "us-east-1"
INSTANCE = "ml.m5.xlarge"
ROLE = "arn:aws:iam::000000000000:role/SageMakerRole"
IMAGE = "registry.example/sharq-e2e-train:1"
QUEUE, SHARE = "ml-training-jq", "ml-team"
# TrainingQueue's defaults (sagemaker.train.aws_batch.constants).
RETRY = {"attempts": 1, "evaluateOnExit": [
    {"action": "RETRY", "onStatusReason": "Received status from SageMaker:InternalServerError: "
                                          "We encountered an internal error. Please try again."},
    {"action": "EXIT", "onStatusReason": "*"}]}
TIMEOUT = {"attemptDurationSeconds": 86400}
# The SDK's pattern for the training job behind an attempt.
TRAINING_JOB = re.compile(r"arn:aws[a-z-]*:sagemaker:[a-z0-9-]*:[0-9]{12}:training-job/(.+)")
WAIT = 120  # seconds any one wait may take before the scenario fails


def fail(msg):
    print("FAIL:", msg, flush=True)
    sys.exit(1)


def log(*a):
    print(*a, flush=True)


class Trainer:
    def __init__(self, args):
        self.args = args
        self.bucket = args.bucket  # ModelTrainer's default is sagemaker-<region>-<account>
        once = Config(retries={"max_attempts": 1})  # every error reaches the scenario
        self.batch = boto3.client("batch", endpoint_url=args.batch, region_name=REGION, config=once)
        self.s3 = boto3.client("s3", endpoint_url=args.s3, region_name=REGION,
                               config=Config(s3={"addressing_style": "path"}))

    # --- S3, as ModelTrainer uses it before it submits ---

    def ensure_bucket(self):
        if self.bucket in [b["Name"] for b in self.s3.list_buckets().get("Buckets", [])]:
            return
        try:
            self.s3.head_bucket(Bucket=self.bucket)
        except ClientError as e:
            if e.response["Error"]["Code"] not in ("404", "NoSuchBucket", "NotFound"):
                raise
            self.s3.create_bucket(Bucket=self.bucket)

    def upload(self, prefix, files):
        """Uploads files ({name: bytes}) under prefix; returns its s3:// URI."""
        for name, body in files.items():
            self.s3.put_object(Bucket=self.bucket, Key=prefix + "/" + name, Body=body)
        return "s3://%s/%s" % (self.bucket, prefix)

    def get(self, key):
        return self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read()

    # --- the queue an administrator sets up ---

    def set_up_queue(self, capacity, in_share_preemption=False):
        b = self.batch
        policy = b.create_scheduling_policy(name="ml-policy", quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
        b.create_service_environment(serviceEnvironmentName="ml-se", serviceEnvironmentType="SAGEMAKER_TRAINING",
                                     state="ENABLED", capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": capacity}])
        b.create_job_queue(jobQueueName=QUEUE, priority=1, jobQueueType="SAGEMAKER_TRAINING", state="ENABLED",
                           schedulingPolicyArn=policy["arn"],
                           serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": "ml-se"}])
        share = b.create_quota_share(
            quotaShareName=SHARE, jobQueue=QUEUE, state="ENABLED",
            capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": capacity}],
            resourceSharingConfiguration={"strategy": "RESERVE"},
            preemptionConfiguration={"inSharePreemption": "ENABLED" if in_share_preemption else "DISABLED"})
        self.until("the queue is VALID", lambda: (
            b.describe_job_queues(jobQueues=[QUEUE])["jobQueues"][0]["status"] == "VALID" and
            b.describe_quota_share(quotaShareArn=share["quotaShareArn"])["status"] == "VALID"))

    # --- ModelTrainer.train through TrainingQueue.submit ---

    def submit(self, base, train_py, channels, hyperparameters, instances=1, checkpoint=False, priority=1):
        """Uploads sm_drivers, code and the data channels ({name: (files,
        distribution)}) as ModelTrainer does and submits the job; returns
        (jobArn, jobId, training job name)."""
        self.ensure_bucket()
        name = "%s-%s" % (base, time.strftime("%Y%m%d%H%M%S"))
        drivers = {"sm_train.sh": read("sm_train.sh"), "scripts/environment.py": read("environment.py")}
        code = {"train.py": read(train_py), "lib/stats.py": read("lib/stats.py")}
        inputs = {"sm_drivers": (drivers, "FullyReplicated"), "code": (code, "FullyReplicated")}
        inputs.update(channels)
        config = []
        for channel, (files, distribution) in inputs.items():
            uri = self.upload("%s/%s/input/%s" % (base, name, channel), files)
            config.append({"ChannelName": channel, "InputMode": "File", "DataSource": {"S3DataSource": {
                "S3DataType": "S3Prefix", "S3Uri": uri, "S3DataDistributionType": distribution}}})
        payload = {
            "TrainingJobName": name,
            "AlgorithmSpecification": {
                "TrainingImage": IMAGE, "TrainingInputMode": "File",
                "ContainerEntrypoint": ["/bin/bash"],
                "ContainerArguments": ["-c", "chmod +x /opt/ml/input/data/sm_drivers/sm_train.sh && "
                                             "/opt/ml/input/data/sm_drivers/sm_train.sh"]},
            "InputDataConfig": config,
            "OutputDataConfig": {"S3OutputPath": "s3://%s/%s" % (self.bucket, base), "CompressionType": "GZIP"},
            "HyperParameters": {k: json.dumps(v) for k, v in hyperparameters.items()},
            "RoleArn": ROLE,
            "ResourceConfig": {"InstanceType": INSTANCE, "InstanceCount": instances, "VolumeSizeInGB": 30},
            "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
            "Environment": {"SHARQ_E2E_MARK": self.args.mark + "/" + base},
        }
        if checkpoint:
            # As CheckpointConfig(s3_uri=...) sends it: LocalPath defaults to /opt/ml/checkpoints.
            payload["CheckpointConfig"] = {"S3Uri": "s3://%s/%s/checkpoints/%s" % (self.bucket, base, name)}
        out = self.batch.submit_service_job(
            jobName=base, jobQueue=QUEUE, serviceJobType="SAGEMAKER_TRAINING", quotaShareName=SHARE,
            serviceRequestPayload=json.dumps(payload), retryStrategy=RETRY, timeoutConfig=TIMEOUT,
            schedulingPriority=priority)
        log("submitted", base, out["jobArn"])
        return out["jobArn"], out["jobId"], payload

    def describe(self, job):
        return self.batch.describe_service_job(jobId=job)

    def wait(self, job, seen=None):
        """Polls the job every second until it has ended, as TrainingQueue's
        wait does (every 5 s there); seen collects each status and reason."""
        deadline = time.time() + WAIT
        while True:
            d = self.describe(job)
            step = (d["status"], d.get("statusReason", ""))
            if seen is not None and (not seen or seen[-1] != step):
                seen.append(step)
                log("status", *step)
            if d["status"] in ("SUCCEEDED", "FAILED"):
                return d
            if time.time() > deadline:
                fail("job %s is still %s after %d s" % (job, d["status"], WAIT))
            time.sleep(1)

    def until(self, what, cond, every=0.1):
        deadline = time.time() + WAIT
        while not cond():
            if time.time() > deadline:
                fail("waited %d s for %s" % (WAIT, what))
            time.sleep(every)

    def training_job(self, attempt):
        m = TRAINING_JOB.fullmatch(attempt.get("serviceResourceId", {}).get("value", ""))
        if not m:
            fail("attempt %s has no training-job ARN as its serviceResourceId" % json.dumps(attempt, default=str))
        return m.group(1)

    def model(self, base, d):
        """The files of the model.tar.gz of the job's latest attempt."""
        return self.archive("%s/%s/output/model.tar.gz" % (base, self.training_job(d["latestAttempt"])))

    def archive(self, key):
        try:
            body = self.get(key)
        except ClientError as e:
            fail("s3://%s/%s: %s" % (self.bucket, key, e))
        with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
            return {m.name.removeprefix("./"): tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}


def read(name):
    """A file of this directory: the scripts a job's channels carry."""
    with open(os.path.join(HERE, name), "rb") as f:
        return f.read()


def expect(what, got, want):
    if got != want:
        fail("%s: got %r, want %r" % (what, got, want))


def succeeded(d):
    if d["status"] != "SUCCEEDED":
        fail("job %s is %s: %s" % (d["jobName"], d["status"], d.get("statusReason", "")))


def flow(tr):
    """A job with a data channel: it reads the CSV, writes its model and
    metrics; both come back as archives under the output path."""
    tr.set_up_queue(1)
    csv = b"x\n1\n2\n3\n6\n"
    arn, _, _ = tr.submit("mean", "train_mean.py", {"train": ({"data.csv": csv}, "FullyReplicated")},
                          {"epochs": "2", "optimizer": "adam"})
    seen = []
    d = tr.wait(arn, seen)
    succeeded(d)
    before = [s for s, _ in seen if s in ("SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING")]
    if not before:
        fail("no describe saw the job before it ran: %s" % seen)
    name = tr.training_job(d["latestAttempt"])
    model = json.loads(tr.model("mean", d)["model.json"])
    expect("model.json", model, {"mean": 3.0, "rows": 4, "epochs": 2, "optimizer": "adam", "host": "algo-1"})
    metrics = json.loads(tr.archive("mean/%s/output/output.tar.gz" % name)["metrics.json"])
    expect("output.tar.gz's metrics.json", metrics, {"rows": 4})
    return {"job": arn, "training_job": name, "statuses": seen, "model": model}


def failure(tr):
    """train.py raises: the driver's failure file is the job's reason."""
    tr.set_up_queue(1)
    arn, _, _ = tr.submit("nan", "train_fail.py", {}, {"epochs": 3})
    d = tr.wait(arn)
    if d["status"] != "FAILED":
        fail("job ended %s, want FAILED" % d["status"])
    prefix = "nan/%s/output/" % tr.training_job(d["latestAttempt"])
    output = tr.archive(prefix + "output.tar.gz")
    expect("output.tar.gz of the failed job", output, {"losses.txt": "nan\n"})
    keys = [o["Key"] for o in tr.s3.list_objects_v2(Bucket=tr.bucket, Prefix=prefix).get("Contents", [])]
    expect("the failed job's outputs", keys, [prefix + "output.tar.gz"])
    return {"job": arn, "statusReason": d.get("statusReason", "")}


def two_hosts(tr):
    """Two hosts, each with its own resource config and its own shard of a
    4-object channel; the model is both hosts' model directories."""
    tr.set_up_queue(2)
    parts = {"part-%d.csv" % i: b"x\n%d\n" % i for i in range(4)}
    arn, _, _ = tr.submit("shards", "train_shards.py", {"train": (parts, "ShardedByS3Key")}, {}, instances=2)
    d = tr.wait(arn)
    succeeded(d)
    model = tr.model("shards", d)
    return {"job": arn, "files": sorted(model), "model": model}


def checkpoint(tr):
    """A job that saves a checkpoint on SIGTERM is preempted by a more urgent
    one in its share; its checkpoint is in S3, and its next attempt, on a
    machine that kept nothing of the first (its checkpoint directory is
    emptied), resumes from it."""
    tr.set_up_queue(1, in_share_preemption=True)
    work = tr.args.work
    ready, release = os.path.join(work, "ready"), os.path.join(work, "release")
    arn, job_id, payload = tr.submit("resumable", "train_checkpoint.py", {}, {"ready": ready}, checkpoint=True)
    tr.until("the first attempt to make progress (%s)" % ready, lambda: os.path.exists(ready))
    first = tr.describe(arn)
    expect("resumable's status once it makes progress", first["status"], "RUNNING")
    urgent, _, _ = tr.submit("urgent", "train_checkpoint.py", {}, {"hold": release}, priority=9)

    tr.until("resumable to be preempted", lambda: tr.describe(arn).get("preemptionSummary", {})
             .get("preemptedAttemptCount", 0) == 1)
    ckpt = urllib.parse.urlparse(payload["CheckpointConfig"]["S3Uri"])
    key = ckpt.path.lstrip("/") + "/state.json"

    def saved():
        try:
            return json.loads(tr.get(key))
        except ClientError:
            return None
    tr.until("the checkpoint in s3://%s/%s" % (tr.bucket, key), lambda: saved() is not None)
    step = saved()["step"]
    if step < 5:
        fail("checkpoint step %d, want at least 5 (the first attempt was ready at step 5)" % step)
    local = os.path.join(tr.args.checkpoints, urllib.parse.quote(job_id, safe=""))
    if not os.path.isdir(local):
        fail("no checkpoint directory %s on this machine" % local)
    shutil.rmtree(local)
    open(release, "w").close()

    u = tr.wait(urgent)
    succeeded(u)
    d = tr.wait(arn)
    succeeded(d)
    model = json.loads(tr.model("resumable", d)["model.json"])
    expect("model.json", model, {"resumed_from": step, "final_step": step + 3})
    return {"job": arn, "checkpoint_step": step, "attempts": [tr.training_job(a) for a in d["attempts"]],
            "model": model}


SCENARIOS = {"flow": flow, "failure": failure, "two-hosts": two_hosts, "checkpoint": checkpoint}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=sorted(SCENARIOS))
    p.add_argument("--batch", required=True)
    p.add_argument("--s3", required=True)
    p.add_argument("--mark", required=True)
    p.add_argument("--bucket", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--checkpoints")
    args = p.parse_args()
    result = SCENARIOS[args.scenario](Trainer(args))
    print("RESULT", json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
