"""Signs AWS Batch calls with boto3 against a sharq verifier: a good key,
a wrong secret, an unknown key and no signature; prints one line each."""
import sys

import boto3
from botocore import UNSIGNED
from botocore.config import Config

url, key, secret = sys.argv[1:4]


def client(key, secret, **cfg):
    return boto3.client("batch", endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id=key, aws_secret_access_key=secret,
                        config=Config(retries={"max_attempts": 1}, **cfg))


def call(name, c):
    try:
        c.list_service_jobs(jobQueue="jq")
        print(name)
    except c.exceptions.ClientError as e:
        print(name.split()[0], e.response["Error"]["Code"])


call("ok", client(key, secret))
call("wrong-secret x", client(key, "wrong"))
call("unknown-key x", client("SKIANOSUCHKEY", secret))
call("unsigned x", client(key, secret, signature_version=UNSIGNED))
