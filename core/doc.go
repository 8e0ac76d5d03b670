// Package core is opsgate's transport-neutral centre: the domain types, the
// interfaces it consumes, and the engine that runs conversations. It imports
// only the standard library (TestCoreImportsOnlyStandardLibrary keeps it so);
// implementations live in sibling packages and only cmd/opsgate wires them.
// docs/design.md describes the whole architecture; this is a tour of the
// package, in the order a message meets it.
//
// # A run
//
// One user turn is one [Run]. [Engine.Handle] refuses what must never run
// (shutdown, the run limit of [Limiter]), stores the inbound message
// (a redelivered platform message id is ignored), and routes it: /stop
// stops the active run, a chat command goes to [Commands], anything else
// starts a run or meets the active one by its [QueueMode]. A run walks a
// graph of five nodes:
//
//	entry -> memory_prepare -> model -> gate -> model ... -> final
//	entry -> gate (resuming after an approval)
//
// The model node windows the transcript ([Window]), offers the loaded
// toolsets' tools plus the virtual ones, and streams one completion through
// a [Model], retrying rate limits and transient failures before any output.
// The gate runs tool calls through a [ToolHost] in source order. final emits
// completed with the run's status. [Engine.Stop] cancels the in-flight model
// stream and tool call through their contexts; [Engine.Recover] runs stored
// messages a crash left unhandled; [Engine.Shutdown] lets runs finish or
// checkpoint. docs/design.md §2.
//
// # Approvals
//
// Any tool whose risk is not [RiskRead] pauses the run: the rest of the batch
// is checkpointed ([Checkpoint]), every approval-needing call is posted as
// an [Approval] at once, and the run ends with status awaiting_approval. The
// [Policy] classifies each call and says who may decide; it only tightens
// ([DefaultPolicy] is the behaviour without a policy file) and its [Verdict]
// is stored with the approval. [Engine.Decide] counts one vote per person
// towards the quorum, bound to an [ActionHash] of exactly what will run,
// which is checked again right before execution. The last decision resumes
// the run in whichever process received it. Expiry
// ([Engine.ExpireApprovals]) counts as a denial; a new message supersedes
// open requests; /stop cancels them; [Engine.DenyAsSystem] is the only
// decision opsgate makes itself. docs/design.md §3.
//
// # Virtual tools and memory hooks
//
// A [VirtualTool] runs in-process, without an MCP round trip or a card:
// load_toolset is the engine's own, and package memory registers its tools
// through [Deps]. What such a tool must not do alone it proposes
// ([VirtualCall.Propose]) for the people [Admins] names; a [Decider] hears
// the outcome. memory_prepare asks the [Retriever] once per turn and injects
// its [MemoryContext] into that turn's model calls only; a retriever that is
// also a [NoteTaker] keeps the facts a compaction found. docs/design.md §4,
// §14.
//
// # Events and subscriptions
//
// Every step of a run is an [Event], numbered per conversation. Each
// conversation's outbox stamps an event, passes it through [Deps.Display]
// (the redactor, in cmd/opsgate), numbers what comes out with sequence
// numbers reserved from the store, and publishes it. [Engine.Subscribe]
// delivers a conversation's events, or every conversation's, to an
// [EventSender]: each subscriber has its own queue per conversation
// ([SubscribeOptions] bound and narrow it), so a slow chat platform or
// browser never slows a run or another subscriber down. Chat adapters, the
// terminal, the metrics and every HTTP stream are subscribers.
// docs/design.md §5.
//
// # What people are shown
//
// Whatever leaves the engine is safe to show: events pass [Deps.Display],
// and the approvals [Engine.Decide], [Engine.DenyAsSystem] and
// [Engine.Status] return pass [Deps.DisplayApproval] (cmd/opsgate wires
// the redactor into both). Nothing downstream redacts them again; the
// engine's own copies, which are what runs, are never changed.
// docs/design.md §11.
//
// # Chat adapters
//
// Adapters live in adapters/ and talk to the engine through the small
// interface package adapters/chats owns (Handle, Stop, Decide, Status):
// each is built from its configuration alone and given the engine when it
// runs, with its people's identities qualified "platform:id" on the way.
// An adapter that keeps conversations of its own (Telegram's /new) asks
// [Engine.StartConversation] and [Engine.ConversationKeys], never the
// store. docs/design.md §6.
//
// # The event log
//
// The events people were shown are also kept in the store ([EventLog]),
// in batches behind the runs, for [Config.EventRetention]. A stream that
// reconnects subscribes first, reads what it missed with [Engine.Events]
// ([EventQuery]), then skips what it already showed. While the store is
// down at most [Config.EventBuffer] events wait; past that the oldest are
// dropped and an [EventGap] event names them, so nothing is missing
// silently. docs/design.md §16.
//
// # Storage
//
// Everything durable goes through [Store]: transcripts, the inbound log,
// runs, checkpoints, approvals, the hash-chained audit log ([AuditEntry],
// [VerifyChain]) and the kept events. memory/sqlite is the embedded default,
// memory/postgres the store for replicas; core/coretest/storetest is the
// conformance suite both pass. A run writes one [Batch] per step
// ([Store.Apply]): its start (the run, the user message, the message marked
// handled), each executed tool (the assistant message that asked for it,
// the result, the audit entry), a pause (requests, audit entries,
// checkpoint) and its end, so that a turn with a tool call costs four
// durable commits, the inbound message's included. docs/design.md §2, §12.
//
// # Replicas
//
// Engines in several processes share one store. A [Coordinator] gives one
// active run per conversation across them: the engine running a
// conversation holds it, and a message, stop or decision reaching another
// engine is stored there and handed over as a [Signal]. A [Leaser] keeps the
// Telegram poller and the Discord gateway on one replica at a time
// (adapters/chats runs them under it). A run
// whose process died is taken up once by another, with a retry note; an
// approved call that never reported back is audited as outcome unknown and
// never run again. docs/design.md §12, §16.
//
// # Schedules
//
// core/schedule fires configured prompts as messages from
// "schedule:<name>"; a [FireLedger] in the store makes each fire run
// exactly once across replicas. docs/design.md §13.
package core
