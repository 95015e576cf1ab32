import Foundation

/// One pending wake-up: raised by a watch, taken by the next pause (or by the one waiting).
actor ChangeSignal {
    private var raised = false
    private var waiter: CheckedContinuation<Void, Never>?

    func raise() {
        if let waiter {
            self.waiter = nil
            waiter.resume()
        } else {
            raised = true
        }
    }

    /// Returns once raised (at once when it was since the last call), or once the task is cancelled.
    func next() async {
        if raised {
            raised = false
            return
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                if Task.isCancelled { c.resume() } else { waiter = c }
            }
        } onCancel: {
            Task { await self.cancelWaiter() }
        }
    }

    private func cancelWaiter() {
        waiter?.resume()
        waiter = nil
    }
}
