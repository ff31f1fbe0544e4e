import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

extension IdentityEndpoint {
    /// The issuer identifiers (OpenID Connect Discovery §3 `issuer`, the tokens' `iss`) the account's authorization
    /// server answers to, to tell whether a discovered route's upstream names it (SPEC §6.3): an `issuer` exactly as
    /// written; for an `authority` — Microsoft's v2.0 paths under it, SPEC §6.2 — `{authority}/v2.0`, and once a
    /// sign-in has told the directory's id (`tid`), `{origin}/{tid}/v2.0` too: `organizations`, `common` and a domain
    /// name all publish the directory's id there. The host plays no part.
    package func issuers(tenantID: String?) -> [String] {
        switch self {
        case .issuer(let issuer):
            return [issuer]
        case .authority(let authority):
            let base = authority.hasSuffix("/") ? String(authority.dropLast()) : authority
            var issuers = [base + "/v2.0"]
            if let tenantID, !tenantID.isEmpty, let separator = base.firstRange(of: "://") {
                // The origin as written: everything before the path.
                let origin = base[separator.upperBound...].firstIndex(of: "/").map { base[..<$0] } ?? base[...]
                let issuer = origin + "/" + tenantID + "/v2.0"
                if !issuers.contains(issuer) { issuers.append(issuer) }
            }
            return issuers
        }
    }
}
