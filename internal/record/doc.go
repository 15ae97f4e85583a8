// Package record declares what sharq stores: the service jobs and the
// resources (scheduling policies, service environments, job queues, quota
// shares) as the engine keeps them, with what it needs to drive them.
//
// Records are not the wire. The AWS Batch API's JSON shapes live in
// batchapi and are made from records there, so the API can change without
// changing what is stored. Every stored document carries its format
// version ("v"); Decode reads each version sharq has written, so a newer
// release opens an older database and two releases of one format can
// share one.
package record
