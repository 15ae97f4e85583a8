// Package batchapi serves the AWS Batch REST-JSON protocol for the
// operations of quota management and service jobs, so the AWS CLI, the AWS
// SDKs and the SageMaker Python SDK work against sharq unchanged.
//
// It sits on the shell side of the core/shell boundary, in front of the
// engine. For each request it:
//
//  1. routes POST /v1/<operation> (and the tag operations on
//     /v1/tags/{resourceArn}) to the operation's handler;
//  2. decodes the JSON body into the wire request and checks its syntax
//     (required members, name patterns, enums, ranges, sizes), answering
//     ClientException before the engine is called, so bad input changes
//     nothing;
//  3. asks Options.Authorizer, once, whether the caller (the
//     access.Identity that access.Middleware put in the request's context)
//     may perform the operation's IAM action on its resource (the list is
//     in package access), answering AccessDeniedException if not;
//  4. calls the engine, which checks what needs state;
//  5. encodes the engine's records in the operation's output shape.
//
// Steps 2 to 4 of UpdateServiceJob and TerminateServiceJob are exported
// (Handler.UpdateServiceJob, Handler.TerminateServiceJob): the console's
// job writes run them too.
//
// Errors are AWS's two modeled errors, ClientException (400) with a message
// the client may show or match on and ServerException (500) whose message
// is always "internal error" while the cause is logged, and the
// AccessDeniedException (403) that AWS answers when IAM refuses a request.
// Every response carries an x-amzn-RequestId.
//
// Requests may be signed with any SigV4 credentials, or not at all: the
// default authenticator lets every caller in as anonymous.
package batchapi
