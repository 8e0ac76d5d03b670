// Package core is opsgate's transport-neutral centre: the domain types, the
// interfaces it consumes, and the engine that runs conversations. It imports
// only the standard library (TestCoreImportsOnlyStandardLibrary keeps it so);
// implementations live in sibling packages and only cmd/opsgate wires them.
//
// # A run
//
// One user turn is one [Run]. [Engine.Handle] stores the inbound message
// first (a redelivered platform message id is ignored), then walks a graph of
// five nodes:
//
//	entry -> memory_prepare -> model -> gate -> model ... -> final
//	entry -> gate (resuming after an approval)
//
// The model node windows the transcript ([Window]), offers the loaded
// toolsets' tools plus the virtual load_toolset, and streams one completion
// through a [Model]. The gate runs tool calls through a [ToolHost] in source
// order. Events ([Event]) report every step, in order, to every
// [EventSender] subscribed to the conversation ([Engine.Subscribe]); each
// subscriber has its own queue, so a slow chat platform or browser never
// slows a run or another subscriber down.
//
// # Approvals
//
// Any tool whose risk is not [RiskRead] pauses the run: the rest of the batch
// is checkpointed, every approval-needing call is posted as an [Approval] at
// once, and the run ends with status awaiting_approval. A decision
// ([Engine.Decide]) is one-shot, bound to an [ActionHash] of exactly what
// will run, and checked again right before execution. The last decision
// resumes the run in whichever process received it. Expiry counts as a
// denial; a new message supersedes open requests; /stop cancels them.
//
// # Sessions
//
// A conversation has at most one active run. A message arriving meanwhile
// steers it, follows it, or interrupts it ([QueueMode]). [Engine.Stop]
// cancels the in-flight model stream and tool call through their contexts.
//
// # Storage
//
// Everything durable goes through [Store]: transcripts, runs, checkpoints,
// approvals and the append-only audit log. memory/sqlite is the embedded
// default; core/coretest/storetest is the conformance suite a store must pass.
// A run writes one [Batch] per step ([Store.Apply]): its start (the run, the
// user message, the message marked handled), each executed tool (the
// assistant message that asked for it, the result, the audit entry), a pause
// (requests, audit entries, checkpoint) and its end, so that a turn with a
// tool call costs four durable commits, the inbound message's included.
package core
