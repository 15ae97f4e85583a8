package record

import "encoding/json"

// Format 0, the first release's: a record was the API's JSON shape of the
// resource or job, and a job's engine fields were under "sharq". These
// types are that format, frozen; they only read.

func decodeV0[L, R any](doc []byte, out *R, toRecord func(L) R) error {
	var l L
	if err := json.Unmarshal(doc, &l); err != nil {
		return err
	}
	*out = toRecord(l)
	return nil
}

func each[From, To any](in []From, f func(From) To) []To {
	if in == nil {
		return nil
	}
	out := make([]To, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

type capacityLimitV0 struct {
	CapacityUnit string `json:"capacityUnit"`
	MaxCapacity  int    `json:"maxCapacity"`
}

func limitsV0(in []capacityLimitV0) []CapacityLimit {
	return each(in, func(l capacityLimitV0) CapacityLimit { return CapacityLimit(l) })
}

type policyV0 struct {
	Arn              string `json:"arn"`
	Name             string `json:"name"`
	QuotaSharePolicy *struct {
		IdleResourceAssignmentStrategy string `json:"idleResourceAssignmentStrategy"`
	} `json:"quotaSharePolicy"`
	FairsharePolicy json.RawMessage   `json:"fairsharePolicy"`
	Tags            map[string]string `json:"tags"`
}

func (p policyV0) record() SchedulingPolicy {
	r := SchedulingPolicy{Arn: p.Arn, Name: p.Name, FairsharePolicy: p.FairsharePolicy, Tags: p.Tags}
	if qp := p.QuotaSharePolicy; qp != nil {
		r.QuotaSharePolicy = &QuotaSharePolicy{IdleResourceAssignmentStrategy: qp.IdleResourceAssignmentStrategy}
	}
	return r
}

type envV0 struct {
	ServiceEnvironmentName string            `json:"serviceEnvironmentName"`
	ServiceEnvironmentArn  string            `json:"serviceEnvironmentArn"`
	ServiceEnvironmentType string            `json:"serviceEnvironmentType"`
	State                  string            `json:"state"`
	Status                 string            `json:"status"`
	CapacityLimits         []capacityLimitV0 `json:"capacityLimits"`
	Tags                   map[string]string `json:"tags"`
}

func (e envV0) record() ServiceEnvironment {
	return ServiceEnvironment{
		ServiceEnvironmentName: e.ServiceEnvironmentName, ServiceEnvironmentArn: e.ServiceEnvironmentArn,
		ServiceEnvironmentType: e.ServiceEnvironmentType, State: e.State, Status: e.Status,
		CapacityLimits: limitsV0(e.CapacityLimits), Tags: e.Tags,
	}
}

type envOrderV0 struct {
	Order              int    `json:"order"`
	ServiceEnvironment string `json:"serviceEnvironment"`
}

type timeLimitV0 struct {
	Action         string `json:"action"`
	MaxTimeSeconds int    `json:"maxTimeSeconds"`
	Reason         string `json:"reason"`
	State          string `json:"state"`
}

type queueV0 struct {
	JobQueueName             string            `json:"jobQueueName"`
	JobQueueArn              string            `json:"jobQueueArn"`
	State                    string            `json:"state"`
	SchedulingPolicyArn      string            `json:"schedulingPolicyArn"`
	Status                   string            `json:"status"`
	StatusReason             string            `json:"statusReason"`
	Priority                 int               `json:"priority"`
	ComputeEnvironmentOrder  []json.RawMessage `json:"computeEnvironmentOrder"`
	ServiceEnvironmentOrder  []envOrderV0      `json:"serviceEnvironmentOrder"`
	JobQueueType             string            `json:"jobQueueType"`
	Tags                     map[string]string `json:"tags"`
	JobStateTimeLimitActions []timeLimitV0     `json:"jobStateTimeLimitActions"`
}

func (q queueV0) record() JobQueue {
	return JobQueue{
		JobQueueName: q.JobQueueName, JobQueueArn: q.JobQueueArn, State: q.State,
		SchedulingPolicyArn: q.SchedulingPolicyArn, Status: q.Status, StatusReason: q.StatusReason,
		Priority: q.Priority, ComputeEnvironmentOrder: q.ComputeEnvironmentOrder,
		ServiceEnvironmentOrder: each(q.ServiceEnvironmentOrder, func(o envOrderV0) ServiceEnvironmentOrder {
			return ServiceEnvironmentOrder(o)
		}),
		JobQueueType: q.JobQueueType, Tags: q.Tags,
		JobStateTimeLimitActions: each(q.JobStateTimeLimitActions, func(a timeLimitV0) JobStateTimeLimitAction {
			return JobStateTimeLimitAction(a)
		}),
	}
}

type shareV0 struct {
	QuotaShareName               string            `json:"quotaShareName"`
	QuotaShareArn                string            `json:"quotaShareArn"`
	JobQueueArn                  string            `json:"jobQueueArn"`
	CapacityLimits               []capacityLimitV0 `json:"capacityLimits"`
	ResourceSharingConfiguration struct {
		Strategy    string `json:"strategy"`
		BorrowLimit *int   `json:"borrowLimit"`
	} `json:"resourceSharingConfiguration"`
	PreemptionConfiguration struct {
		InSharePreemption string `json:"inSharePreemption"`
	} `json:"preemptionConfiguration"`
	State  string            `json:"state"`
	Status string            `json:"status"`
	Tags   map[string]string `json:"tags"`
}

func (s shareV0) record() QuotaShare {
	return QuotaShare{
		QuotaShareName: s.QuotaShareName, QuotaShareArn: s.QuotaShareArn, JobQueueArn: s.JobQueueArn,
		CapacityLimits:               limitsV0(s.CapacityLimits),
		ResourceSharingConfiguration: ResourceSharingConfiguration(s.ResourceSharingConfiguration),
		PreemptionConfiguration:      QuotaSharePreemptionConfiguration(s.PreemptionConfiguration),
		State:                        s.State, Status: s.Status, Tags: s.Tags,
	}
}

type resourceIDV0 struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type attemptV0 struct {
	ServiceResourceID resourceIDV0 `json:"serviceResourceId"`
	StartedAt         int64        `json:"startedAt"`
	StoppedAt         int64        `json:"stoppedAt"`
	StatusReason      string       `json:"statusReason"`
}

func (a attemptV0) record() Attempt {
	return Attempt{ServiceResourceID: ServiceResourceID(a.ServiceResourceID), StartedAt: a.StartedAt, StoppedAt: a.StoppedAt, StatusReason: a.StatusReason}
}

type jobV0 struct {
	JobID                 string `json:"jobId"`
	JobName               string `json:"jobName"`
	JobArn                string `json:"jobArn"`
	JobQueue              string `json:"jobQueue"`
	ServiceJobType        string `json:"serviceJobType"`
	Status                string `json:"status"`
	StatusReason          string `json:"statusReason"`
	CreatedAt             int64  `json:"createdAt"`
	ScheduledAt           int64  `json:"scheduledAt"`
	StartedAt             int64  `json:"startedAt"`
	StoppedAt             int64  `json:"stoppedAt"`
	SchedulingPriority    int    `json:"schedulingPriority"`
	QuotaShareName        string `json:"quotaShareName"`
	ShareIdentifier       string `json:"shareIdentifier"`
	IsTerminated          bool   `json:"isTerminated"`
	ServiceRequestPayload string `json:"serviceRequestPayload"`
	RetryStrategy         *struct {
		Attempts       int `json:"attempts"`
		EvaluateOnExit []struct {
			Action         string `json:"action"`
			OnStatusReason string `json:"onStatusReason"`
		} `json:"evaluateOnExit"`
	} `json:"retryStrategy"`
	TimeoutConfig *struct {
		AttemptDurationSeconds int `json:"attemptDurationSeconds"`
	} `json:"timeoutConfig"`
	PreemptionConfiguration *struct {
		PreemptionRetriesBeforeTermination *int `json:"preemptionRetriesBeforeTermination"`
	} `json:"preemptionConfiguration"`
	Tags          map[string]string `json:"tags"`
	CapacityUsage []struct {
		CapacityUnit string  `json:"capacityUnit"`
		Quantity     float64 `json:"quantity"`
	} `json:"capacityUsage"`
	Attempts      []attemptV0 `json:"attempts"`
	LatestAttempt *struct {
		ServiceResourceID resourceIDV0 `json:"serviceResourceId"`
	} `json:"latestAttempt"`
	PreemptionSummary *struct {
		PreemptedAttemptCount   int         `json:"preemptedAttemptCount"`
		RecentPreemptedAttempts []attemptV0 `json:"recentPreemptedAttempts"`
	} `json:"preemptionSummary"`
	Internal struct {
		Queue    string `json:"queue"`
		QueuedAt int64  `json:"queuedAt"`
		Demand   []struct {
			Unit  string
			Count int
		} `json:"demand"`
		Entries      int      `json:"entries"`
		AttemptID    string   `json:"attemptId"`
		AttemptSeq   int      `json:"attemptSeq"`
		DispatchedAt int64    `json:"dispatchedAt"`
		WaitFor      []string `json:"waitFor"`
		ClientToken  string   `json:"clientToken"`
		RequestHash  string   `json:"requestHash"`
		EndedAt      int64    `json:"endedAt"`
		WaitSince    int64    `json:"waitSince"`
		History      []struct {
			At     int64  `json:"at"`
			Status string `json:"status"`
			Reason string `json:"reason"`
		} `json:"history"`
	} `json:"sharq"`
}

func decodeJobV0(doc []byte, out *Job) error {
	var j jobV0
	if err := json.Unmarshal(doc, &j); err != nil {
		return err
	}
	in := j.Internal
	*out = Job{
		JobID: j.JobID, JobName: j.JobName, JobArn: j.JobArn, JobQueue: j.JobQueue, ServiceJobType: j.ServiceJobType,
		SchedulingPriority: j.SchedulingPriority, QuotaShareName: j.QuotaShareName, ShareIdentifier: j.ShareIdentifier,
		ServiceRequestPayload: j.ServiceRequestPayload, Tags: j.Tags, ClientToken: in.ClientToken, RequestHash: in.RequestHash,
		Status: j.Status, StatusReason: j.StatusReason, CreatedAt: j.CreatedAt, ScheduledAt: j.ScheduledAt,
		StartedAt: j.StartedAt, StoppedAt: j.StoppedAt, EndedAt: in.EndedAt, IsTerminated: j.IsTerminated,
		Attempts: each(j.Attempts, attemptV0.record),
		Queue:    in.Queue, QueuedAt: in.QueuedAt, Entries: in.Entries, AttemptID: in.AttemptID, AttemptSeq: in.AttemptSeq,
		DispatchedAt: in.DispatchedAt, WaitFor: in.WaitFor, WaitSince: in.WaitSince,
	}
	if rs := j.RetryStrategy; rs != nil {
		out.RetryStrategy = &RetryStrategy{Attempts: rs.Attempts}
		for _, e := range rs.EvaluateOnExit {
			out.RetryStrategy.EvaluateOnExit = append(out.RetryStrategy.EvaluateOnExit, EvaluateOnExit(e))
		}
	}
	if tc := j.TimeoutConfig; tc != nil {
		out.TimeoutConfig = &TimeoutConfig{AttemptDurationSeconds: tc.AttemptDurationSeconds}
	}
	if pc := j.PreemptionConfiguration; pc != nil {
		out.PreemptionConfiguration = &JobPreemptionConfiguration{PreemptionRetriesBeforeTermination: pc.PreemptionRetriesBeforeTermination}
	}
	out.CapacityUsage = make([]CapacityUsage, len(j.CapacityUsage))
	for i, u := range j.CapacityUsage {
		out.CapacityUsage[i] = CapacityUsage(u)
	}
	for _, t := range in.History {
		out.History = append(out.History, Transition(t))
	}
	for _, d := range in.Demand {
		out.Demand = append(out.Demand, UnitCount(d))
	}
	if la := j.LatestAttempt; la != nil {
		out.LatestAttempt = &LatestAttempt{ServiceResourceID: ServiceResourceID(la.ServiceResourceID)}
	}
	if ps := j.PreemptionSummary; ps != nil {
		out.PreemptionSummary = &PreemptionSummary{
			PreemptedAttemptCount:   ps.PreemptedAttemptCount,
			RecentPreemptedAttempts: each(ps.RecentPreemptedAttempts, attemptV0.record),
		}
	}
	return nil
}
