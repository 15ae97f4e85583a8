// Package s3server serves the S3 API for buckets kept in a directory: the
// bucket and object operations the AWS SDKs, the AWS CLI and the SageMaker
// SDK use (buckets, objects, ListObjects(V2), multipart uploads, ranged
// GETs, aws-chunked bodies with their checksums and chunk signatures).
//
// Invariants:
//   - Bodies are streamed to disk, never held in memory: an object's data,
//     and each part of a multipart upload, is written to a temporary file
//     and renamed into place, so a crash never leaves part of an object
//     visible and a reader sees the old object or the new one.
//   - An object key maps to a path inside its bucket's directory with every
//     segment escaped ("..", ".", "" and "/" included), so no key reaches
//     outside it.
//   - Every operation asks the Authorizer for its IAM action (s3:GetObject,
//     ...) on the ARN AWS would name (arn:aws:s3:::bucket/key).
//
// It sits on the shell side: the caller authenticates requests (package
// sigv4) and mounts Handler where S3 requests arrive.
package s3server
