"""boto3 against a sharq server, pointed at it by AWS_ENDPOINT_URL alone,
with the key from the environment: the SageMaker, CloudWatch Logs and IAM
calls the SageMaker Python SDK makes after a submission. Prints one line
each."""
import sys

import boto3
from botocore.config import Config

name = sys.argv[1]
cfg = Config(retries={"max_attempts": 1})
sm = boto3.client("sagemaker", region_name="us-east-1", config=cfg)
logs = boto3.client("logs", region_name="us-east-1", config=cfg)
iam = boto3.client("iam", region_name="us-east-1", config=cfg)

d = sm.describe_training_job(TrainingJobName=name)
print("describe", d["TrainingJobStatus"], d["SecondaryStatus"], d["CreationTime"] <= d["TrainingEndTime"],
      [t["Status"] for t in d["SecondaryStatusTransitions"]][-1])

streams = logs.describe_log_streams(logGroupName="/aws/sagemaker/TrainingJobs", logStreamNamePrefix=name + "/",
                                    orderBy="LogStreamName", limit=1)["logStreams"]
print("streams", len(streams), streams[0]["logStreamName"].startswith(name + "/algo-1-"))

# Read on from the head one event at a time, as the SDK's log tail does,
# until the token stops moving.
token, lines = None, []
while True:
    kw = {"nextToken": token} if token else {"startFromHead": True}
    r = logs.get_log_events(logGroupName="/aws/sagemaker/TrainingJobs", logStreamName=streams[0]["logStreamName"],
                            limit=1, **kw)
    lines += [e["message"] for e in r["events"]]
    if r["nextForwardToken"] == token:
        break
    token = r["nextForwardToken"]
print("events", lines)

try:
    sm.describe_training_job(TrainingJobName="no-such-training-job")
except sm.exceptions.ClientError as e:
    print("unknown", e.response["Error"]["Code"])

for call in (lambda: iam.get_role(RoleName="SageMakerRole"),
             lambda: iam.simulate_principal_policy(PolicySourceArn="arn:aws:iam::000000000000:role/SageMakerRole",
                                                   ActionNames=["s3:GetObject"])):
    try:
        call()
        print("iam ok")
    except iam.exceptions.ClientError as e:
        print("iam", e.response["Error"]["Code"])
