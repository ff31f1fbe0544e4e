import NIOCore
import NIOEmbedded
import Testing

@testable import BearerDataPlane

/// The connection's one timer on its own: moved only for an earlier deadline, the task it replaces cancelled, and
/// the deadlines of one event armed once.
@Suite("ConnectionTimer: one task, moved only for an earlier deadline")
struct ConnectionTimerTests {
    /// A task on `loop` that fires at `deadline` and counts its firing in `fired`.
    static func task(on loop: EmbeddedEventLoop, at deadline: NIODeadline, _ fired: NIOLoopBoundBox<Int>) -> Scheduled<
        Void
    > {
        loop.scheduleTask(deadline: deadline) { fired.value += 1 }
    }

    @Test("a later deadline never moves the task; an earlier one replaces it, and the replaced one never fires")
    func movesOnlyEarlier() {
        let loop = EmbeddedEventLoop()
        let start = loop.now
        let first = NIOLoopBoundBox(0, eventLoop: loop)
        let second = NIOLoopBoundBox(0, eventLoop: loop)
        var timer = ConnectionTimer()
        #expect(timer.needsArming(for: start + .seconds(75)))
        timer.arm(Self.task(on: loop, at: start + .seconds(75), first), at: start + .seconds(75))
        #expect(!timer.needsArming(for: start + .seconds(75)))
        #expect(!timer.needsArming(for: start + .seconds(100)), "a later deadline keeps the task armed")
        #expect(timer.needsArming(for: start + .seconds(10)))
        timer.arm(Self.task(on: loop, at: start + .seconds(10), second), at: start + .seconds(10))
        #expect(timer.firesAt == start + .seconds(10))
        loop.advanceTime(by: .seconds(200))
        #expect(second.value == 1)
        #expect(first.value == 0, "the task replaced was cancelled")
    }

    @Test("once fired, or cancelled, none is armed: any deadline arms a new task")
    func firedAndCancelled() {
        let loop = EmbeddedEventLoop()
        let fired = NIOLoopBoundBox(0, eventLoop: loop)
        var timer = ConnectionTimer()
        timer.arm(Self.task(on: loop, at: loop.now + .seconds(1), fired), at: loop.now + .seconds(1))
        loop.advanceTime(by: .seconds(1))
        #expect(fired.value == 1)
        timer.fired()
        #expect(timer.firesAt == .distantFuture)
        #expect(timer.needsArming(for: loop.now + .hours(1)))
        timer.arm(Self.task(on: loop, at: loop.now + .seconds(5), fired), at: loop.now + .seconds(5))
        timer.cancel()
        loop.advanceTime(by: .seconds(10))
        #expect(fired.value == 1, "a cancelled task never fires")
        #expect(timer.needsArming(for: loop.now + .hours(1)))
    }

    @Test("a task of the connection's own is cancelled with the timer, and arms no deadline")
    func kept() {
        let loop = EmbeddedEventLoop()
        let fired = NIOLoopBoundBox(0, eventLoop: loop)
        var timer = ConnectionTimer()
        timer.arm(Self.task(on: loop, at: loop.now + .seconds(5), fired), at: loop.now + .seconds(5))
        timer.keep(Self.task(on: loop, at: loop.now + .seconds(2), fired))
        #expect(timer.firesAt == .distantFuture)
        timer.cancel()
        loop.advanceTime(by: .seconds(10))
        #expect(fired.value == 0, "neither the armed task nor the kept one fires once cancelled")
    }

    @Test("the deadlines of one event are marked stale, and taken once")
    func stale() {
        var timer = ConnectionTimer()
        let none = timer.takeStale()
        timer.markStale()
        timer.markStale()
        let marked = timer.takeStale()
        let taken = timer.takeStale()
        #expect(!none && marked && !taken)
    }
}
