import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

@Suite("JSON: where a refused document stops being JSON, and untyped trees through JSONValue")
struct JSONSyntaxTests {
    struct Case: Sendable, CustomStringConvertible {
        let document: String
        let expected: String
        var description: String { document.debugDescription }
    }

    static let cases: [Case] = [
        Case(document: "{\"a\": }", expected: "expected a value at line 1, column 7"),
        Case(document: "[1, 2", expected: "unexpected end of the document at line 1, column 6"),
        Case(document: "[1, 2,,]", expected: "expected a value at line 1, column 7"),
        Case(document: "{\"a\" 1}", expected: "expected ':' at line 1, column 6"),
        Case(document: "{1: 2}", expected: "expected a string naming a member at line 1, column 2"),
        Case(document: "{\"a\": 1, 2}", expected: "expected a string naming a member at line 1, column 10"),
        Case(document: "{\"a\": 1 \"b\": 2}", expected: "expected ',' or '}' at line 1, column 9"),
        Case(document: "[1 2]", expected: "expected ',' or ']' at line 1, column 4"),
        Case(document: "{} {}", expected: "unexpected text after the document at line 1, column 4"),
        Case(document: "\"a\\qb\"", expected: "invalid escape in a string at line 1, column 4"),
        Case(document: "\"\\u12g4\"", expected: "invalid \\u escape in a string at line 1, column 3"),
        Case(document: "\"a\u{1}b\"", expected: "control character in a string at line 1, column 3"),
        Case(document: "[01]", expected: "expected ',' or ']' at line 1, column 3"),
        Case(document: "[1.]", expected: "invalid number at line 1, column 4"),
        Case(document: "[-]", expected: "invalid number at line 1, column 3"),
        Case(document: "[1e+]", expected: "invalid number at line 1, column 5"),
        Case(document: "[tru]", expected: "expected a value at line 1, column 2"),
        Case(document: "\"open", expected: "unexpected end of the document at line 1, column 6"),
        Case(document: "{\n  \"é\": [\n    nul\n  ]\n}", expected: "expected a value at line 3, column 5"),
        Case(document: " \n\t", expected: "the document is empty"),
    ]

    @Test(arguments: cases)
    func locatesTheFirstError(_ testCase: Case) {
        let data = Data(testCase.document.utf8)
        #expect((try? JSONDecoder().decode(JSONValue.self, from: data)) == nil, "the decoder refuses it too")
        #expect(JSONSyntax.firstError(in: data) == testCase.expected)
    }

    @Test("a comma before the close is read by the decoder, so it is no error to the explainer either")
    func trailingComma() {
        for document in ["[1, 2,]", "{\"a\": 1,}", "[[],\n]"] {
            let data = Data(document.utf8)
            #expect((try? JSONDecoder().decode(JSONValue.self, from: data)) != nil)
            #expect(JSONSyntax.firstError(in: data) == nil)
        }
    }

    @Test("nesting deeper than any stack survives: the explainer is iterative")
    func deepNesting() {
        let depth = 200_000
        let open = Data(repeating: UInt8(ascii: "["), count: depth)
        #expect(JSONSyntax.firstError(in: open) == "unexpected end of the document at line 1, column \(depth + 1)")
        let closed = open + Data(repeating: UInt8(ascii: "]"), count: depth)
        #expect(JSONSyntax.firstError(in: closed) == nil)
    }

    /// Differential: mutants of real documents, judged by the decoder and by the explainer. The explainer must never
    /// blame a document the decoder reads, and must find the error in every document the decoder refuses, except
    /// for reasons that are not syntax (a number too large for a `Double`).
    @Test("the explainer agrees with JSONDecoder on 20,000 mutated documents")
    func agreesWithTheDecoder() throws {
        let seeds = [
            #"{"listen": "127.0.0.1:8080", "routes": [{"prefix": "/api", "scopes": ["a", "b"], "timeoutSeconds": 2.5}]}"#,
            #"[true, false, null, -0.5e3, "x\"y\\u00e9", {}, [], {"a": {"b": [1, 2, {"c": null}]}}]"#,
            #"{"error": "invalid_grant", "error_codes": [50126], "expires_in": 3599, "ok": true}"#,
        ]
        let alphabet = Array(#"{}[]":,. -+0123456789eEtrufalsn\x"#.utf8) + [0x0A, 0x09, 0x01]
        var random = SplitMix64(seed: 0x6A73_6F6E)
        var refused = 0
        for index in 0..<20_000 {
            var bytes = Array(seeds[index % seeds.count].utf8)
            for _ in 0...Int(random.next() % 3) {
                let position = Int(random.next() % UInt64(bytes.count + 1))
                let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                switch random.next() % 3 {
                case 0 where position < bytes.count: bytes.remove(at: position)
                case 1 where position < bytes.count: bytes[position] = byte
                default: bytes.insert(byte, at: position)
                }
            }
            let data = Data(bytes)
            let accepted = (try? JSONDecoder().decode(JSONValue.self, from: data)) != nil
            let explanation = JSONSyntax.firstError(in: data)
            if accepted {
                #expect(
                    explanation == nil, "blamed a document the decoder reads: \(String(decoding: data, as: UTF8.self))")
            } else {
                refused += 1
                if explanation == nil {
                    // Syntactically JSON: the decoder refused a number out of range, nothing else.
                    let text = String(decoding: data, as: UTF8.self)
                    #expect(text.contains("e") || text.contains("E"), "missed the error in: \(text)")
                }
            }
        }
        #expect(refused > 10_000, "the mutants exercise refusals (\(refused))")
    }

    @Test("untyped trees: integers stay integers, null is JSONNull, keys sorted and slashes unescaped")
    func untypedTrees() throws {
        let tree = try #require(JSONObject.dictionary(Data(#"{"b": [1, 1.5, true, null], "a": "x/y"}"#.utf8)))
        let list = try #require(tree["b"] as? [Any])
        #expect(list[0] as? Int == 1)
        #expect(list[1] as? Double == 1.5)
        #expect(list[2] as? Bool == true)
        #expect(list[3] is JSONNull)
        #expect(JSONObject.integer(list[0]) == 1 && JSONObject.number(list[0]) == 1.0)
        #expect(JSONObject.integer(list[1]) == nil && JSONObject.number(list[1]) == 1.5)
        let written = try #require(JSONObject.data(tree))
        #expect(String(decoding: written, as: UTF8.self) == #"{"a":"x/y","b":[1,1.5,true,null]}"#)
        #expect(JSONObject.data(["when": Date()]) == nil, "a value JSON has no form for is refused, not guessed")
        #expect(JSONObject.data(["n": Double.nan]) == nil)
        #expect(JSONObject.parse(Data("not json".utf8)) == nil)
    }
}

/// A small seeded generator (Steele, Lea and Flood's SplitMix64), so the differential test is the same every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
