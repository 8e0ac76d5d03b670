// Package chats is the contract between opsgate and its chat adapters, in
// the manner of net/http: a small interface every adapter implements
// ([Chat]), and abilities an adapter may have, which serve asks for at run
// time with a type assertion and does without when they are missing
// ([Healther], [Notifier], [Threader], [Leased], [Router]).
//
// An adapter is built from its configuration alone and touches nothing
// until [Chat.Run], which hands it the [Engine] it talks to; webhooks get
// it the same way ([Router]). The engine an adapter sees is the one of its
// platform ([As]): the people it passes on become identities
// "platform:id" ([Qualify], docs/design.md §11), which is what policies,
// approvers and quorums name.
//
// A [Set] is the adapters one process runs: it routes each conversation's
// events to the adapter that owns it, shows approvals at a policy's notify
// targets ([Set.Notify]), runs pollers and gateways on one replica at a
// time ([Leased], docs/design.md §12), and starts the threads schedules
// fire in ([Target], docs/design.md §13).
package chats
