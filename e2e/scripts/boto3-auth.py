"""boto3 against a sharq server that checks signatures, with team-a's key
from the environment: a submission to its share and one to another's, an
unknown key and an unsigned call. Prints one line each."""
import sys

import boto3
from botocore import UNSIGNED
from botocore.config import Config

url, queue, payload = sys.argv[1:4]
cfg = dict(retries={"max_attempts": 1})


def client(**kw):
    sig = kw.pop("signature_version", None)
    c = Config(signature_version=sig, **cfg) if sig else Config(**cfg)
    return boto3.client("batch", endpoint_url=url, region_name="us-east-1", config=c, **kw)


def call(name, c, share):
    try:
        c.submit_service_job(jobName="boto3-" + share, jobQueue=queue, serviceJobType="SAGEMAKER_TRAINING",
                             quotaShareName=share, serviceRequestPayload=payload)
        print(name, "ok")
    except c.exceptions.ClientError as e:
        print(name, e.response["Error"]["Code"])


call("QS1", client(), "QS1")
call("QS2", client(), "QS2")
call("unknown-key", client(aws_access_key_id="SKIANOSUCHKEY0000000", aws_secret_access_key="x"), "QS1")
call("unsigned", client(signature_version=UNSIGNED), "QS1")
