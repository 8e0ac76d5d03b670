package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/opsgate/opsgate/core"
)

// Precision is how exactly a store must keep times.
const Precision = time.Millisecond

// Run runs the conformance suite against fresh stores made by open (one per
// subtest). open must return an empty store and arrange for it to be closed
// when t ends (t.Cleanup); it may call t.Fatal when the store cannot be made.
func Run(t *testing.T, open func(t *testing.T) core.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s core.Store)
	}{
		{"SaveInboundDedupe", testSaveInboundDedupe},
		{"SaveInboundEmptyMessageID", testSaveInboundEmptyMessageID},
		{"SaveInboundPerConversation", testSaveInboundPerConversation},
		{"SaveInboundConcurrent", testSaveInboundConcurrent},
		{"PendingInbound", testPendingInbound},
		{"ConversationCreatedOnFirstUse", testConversationCreatedOnFirstUse},
		{"UpdateConversation", testUpdateConversation},
		{"ConversationsByActivity", testConversationsByActivity},
		{"ConversationsPrefixIsLiteral", testConversationsPrefixIsLiteral},
		{"ConversationsConcurrentActivity", testConversationsConcurrentActivity},
		{"MessagesRoundTrip", testMessagesRoundTrip},
		{"MessagesOrderAcrossAppends", testMessagesOrderAcrossAppends},
		{"MessagesPerConversation", testMessagesPerConversation},
		{"MessagesConcurrentAppends", testMessagesConcurrentAppends},
		{"RunCreateGet", testRunCreateGet},
		{"RunUpdate", testRunUpdate},
		{"RunNotFound", testRunNotFound},
		{"RunDuplicate", testRunDuplicate},
		{"UnfinishedRuns", testUnfinishedRuns},
		{"ReserveSeqConcurrent", testReserveSeqConcurrent},
		{"ReserveSeqInBatch", testReserveSeqInBatch},
		{"EventsRoundTrip", testEventsRoundTrip},
		{"EventsAppendIsIdempotent", testEventsAppendIsIdempotent},
		{"EventsPrune", testEventsPrune},
		{"CheckpointSaveGet", testCheckpointSaveGet},
		{"CheckpointReplace", testCheckpointReplace},
		{"CheckpointNotFound", testCheckpointNotFound},
		{"ClaimCheckpointOnce", testClaimCheckpointOnce},
		{"ClaimCheckpointConcurrent", testClaimCheckpointConcurrent},
		{"CheckpointsOfConversation", testCheckpointsOfConversation},
		{"ApprovalCreateGet", testApprovalCreateGet},
		{"ApprovalNotFound", testApprovalNotFound},
		{"ApprovalsInCreationOrder", testApprovalsInCreationOrder},
		{"ApprovalsDuplicateBatch", testApprovalsDuplicateBatch},
		{"DecideApproval", testDecideApproval},
		{"DecideApprovalFirstWins", testDecideApprovalFirstWins},
		{"DecideApprovalConcurrent", testDecideApprovalConcurrent},
		{"DecideApprovalNotFound", testDecideApprovalNotFound},
		{"DecideApprovalNotFinal", testDecideApprovalNotFinal},
		{"ApprovalPreview", testApprovalPreview},
		{"ExpiredApprovals", testExpiredApprovals},
		{"PendingSummary", testPendingSummary},
		{"VotesRoundTrip", testVotesRoundTrip},
		{"VoteOncePerPerson", testVoteOncePerPerson},
		{"VoteOnDecided", testVoteOnDecided},
		{"VotesConcurrent", testVotesConcurrent},
		{"AuditAppendAssignsIDs", testAuditAppendAssignsIDs},
		{"AuditFilter", testAuditFilter},
		{"AuditUnchanged", testAuditUnchanged},
		{"AuditConcurrentAppends", testAuditConcurrentAppends},
		{"AuditChain", testAuditChain},
		{"Apply", testApply},
		{"ApplyAllOrNothing", testApplyAllOrNothing},
		{"ApplyEmpty", testApplyEmpty},
		{"ApplyConcurrent", testApplyConcurrent},
		{"FireClaimedOnce", testFireClaimedOnce},
		{"FireClaimConcurrent", testFireClaimConcurrent},
		{"FireSkippedWhileRunning", testFireSkippedWhileRunning},
		{"FireOfAGoneReplicaBlocksNothing", testFireOfAGoneReplicaBlocksNothing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open(t))
		})
	}
}

// cmpOpts compare values as a store must keep them (see the package doc).
var cmpOpts = cmp.Options{
	cmpopts.EquateApproxTime(Precision),
	cmpopts.EquateEmpty(),
}

// diff reports a mismatch between want and got.
func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got, cmpOpts); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// t0 has sub-millisecond digits, so a store that keeps only seconds fails,
// and a zone other than UTC, so a store must keep the instant, not the
// wall clock.
var t0 = time.Date(2025, 3, 14, 9, 26, 53, 589_793_238, time.FixedZone("CET", 3600))

// at returns t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// concurrently runs fn(i) for i in [0, n) from n goroutines released
// together, to make racing callers as likely as possible.
func concurrently(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// ptr returns a pointer to a copy of v, for Batch fields.
func ptr[T any](v T) *T { return &v }

// racers is how many goroutines race for one-shot operations.
const racers = 16
