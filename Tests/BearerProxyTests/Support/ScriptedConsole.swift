import Foundation
import Synchronization

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// A terminal for the sign-in tests: answers come from a closure (which may ask the fake identity provider for
/// the code it "emailed"), and everything shown, asked and opened is recorded.
final class ScriptedConsole: SignInConsole {
    struct Question: Sendable, Equatable {
        var text: String
        var hidden: Bool
    }

    private struct Record {
        var lines: [String] = []
        var questions: [Question] = []
        var waits = 0
        var opened: [String] = []
    }

    let canAsk: Bool
    private let answer: @Sendable (Question) async -> String?
    private let browserAvailable: Bool
    private let record = Mutex(Record())
    private let openedURL = AsyncStream<String>.makeStream()

    /// - Parameters:
    ///   - answer: the reply to each question; nil = end of input.
    ///   - browser: whether `openBrowser` succeeds; either way the URL is recorded and handed to `nextOpenedURL()`.
    init(
        canAsk: Bool = true, browser: Bool = false,
        answer: @escaping @Sendable (Question) async -> String? = { _ in nil }
    ) {
        self.canAsk = canAsk
        self.browserAvailable = browser
        self.answer = answer
    }

    /// Answers the n-th question with the n-th reply, worked out when it is asked (a code the fake provider
    /// has just "emailed"); end of input after the last.
    convenience init(replies: [@Sendable () -> String?]) {
        let asked = Mutex(0)
        self.init { _ in
            let n = asked.withLock { count -> Int in
                defer { count += 1 }
                return count
            }
            return n < replies.count ? replies[n]() : nil
        }
    }

    /// Answers the questions in order, then end of input.
    convenience init(answers: [String]) {
        let queue = Mutex(answers)
        self.init { _ in queue.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
    }

    var lines: [String] { record.withLock { $0.lines } }
    var questions: [Question] { record.withLock { $0.questions } }
    var waits: Int { record.withLock { $0.waits } }
    var opened: [String] { record.withLock { $0.opened } }
    /// Everything shown and asked, one string.
    var transcript: String { (lines + questions.map(\.text)).joined(separator: "\n") }

    func show(_ line: String) {
        record.withLock { $0.lines.append(line) }
    }

    func ask(_ question: String, hidden: Bool) async throws(SignInFailure) -> String {
        let asked = Question(text: question, hidden: hidden)
        record.withLock { $0.questions.append(asked) }
        guard let reply = await answer(asked) else { throw SignInFailure(.cancelled, "No answer (end of input).") }
        return reply
    }

    func stillWaiting(_ what: String) {
        record.withLock { $0.waits += 1 }
    }

    func openBrowser(_ url: String) async -> Bool {
        record.withLock { $0.opened.append(url) }
        openedURL.continuation.yield(url)
        return browserAvailable
    }

    /// Ends `nextOpenedURL()` waits: the sign-in is over.
    func close() {
        openedURL.continuation.finish()
    }

    /// The next URL the sign-in asked to open (the test then plays the browser).
    func nextOpenedURL() async -> String? {
        for await url in openedURL.stream { return url }
        return nil
    }
}
