#!/usr/bin/env python3
"""boto3's S3 calls against sharq's built-in S3, pointed there by
AWS_ENDPOINT_URL alone (and AWS_CA_BUNDLE over HTTPS), signed with the key
in AWS_ACCESS_KEY_ID: what the SageMaker SDK does before it submits
(ListBuckets, HeadBucket, CreateBucket, PutObject, a multipart upload by
the transfer manager), then reads back, ranges, listings and a refusal.

  boto3-s3.py BUCKET OTHER_BUCKET WORKDIR

Prints one line per check, for the Go test to compare.
"""
import hashlib
import os
import sys

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

bucket, other, work = sys.argv[1:4]
s3 = boto3.client("s3")


def code(fn):
    try:
        fn()
        return "ok"
    except ClientError as e:
        return e.response["Error"]["Code"]


names = [b["Name"] for b in s3.list_buckets().get("Buckets", [])]
print("listed", bucket in names)
print("head", code(lambda: s3.head_bucket(Bucket=bucket)))
s3.put_object(Bucket=bucket, Key="code/train.py", Body=b"print('hello')\n")
print("get", s3.get_object(Bucket=bucket, Key="code/train.py")["Body"].read() == b"print('hello')\n")

big = os.path.join(work, "big.bin")
with open(big, "wb") as f:
    for i in range(20):
        f.write(hashlib.sha256(str(i).encode()).digest() * (1 << 15))  # 1 MiB each
cfg = TransferConfig(multipart_threshold=8 << 20, multipart_chunksize=8 << 20)
s3.upload_file(big, bucket, "data/big.bin", Config=cfg)
back = os.path.join(work, "back.bin")
s3.download_file(bucket, "data/big.bin", back, Config=cfg)
same = open(big, "rb").read() == open(back, "rb").read()
print("multipart", same, s3.head_object(Bucket=bucket, Key="data/big.bin")["ETag"].endswith('-3"'))
part = s3.get_object(Bucket=bucket, Key="data/big.bin", Range="bytes=1048576-1048607")["Body"].read()
print("range", part == open(big, "rb").read()[1048576:1048608])
page = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
print("list", sorted(p["Prefix"] for p in page.get("CommonPrefixes", [])))
print("missing", code(lambda: s3.head_object(Bucket=bucket, Key="nothing")),
      code(lambda: s3.get_object(Bucket=bucket, Key="nothing")))
print("other", code(lambda: s3.put_object(Bucket=other, Key="x", Body=b"x")),
      code(lambda: s3.list_objects_v2(Bucket=other)))
