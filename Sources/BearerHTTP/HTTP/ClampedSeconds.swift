// A file of its own although short: the token cache, `status`, `Retry-After` and device codes all turn a number of
// seconds that may come from the network (or from a clock that stepped) into an `Int`.

import BearerJSON

extension Int {
    /// `seconds` rounded by `rule` and clamped to `range` — converted only once it is in range, so no number a
    /// provider sends or a stepped clock produces can reach a trapping `Int(_:)`. NaN is the lower bound.
    package init(seconds: Double, rounded rule: FloatingPointRoundingRule, clampedTo range: ClosedRange<Int>) {
        let rounded = seconds.rounded(rule)
        if !(rounded > Double(range.lowerBound)) {
            self = range.lowerBound
        } else if rounded >= Double(range.upperBound) {
            self = range.upperBound
        } else {
            self = Int(rounded)
        }
    }
}
