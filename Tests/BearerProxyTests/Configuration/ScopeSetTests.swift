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

@Suite struct ScopeSetTests {
    @Test func deduplicatesAndSorts() {
        let set = ScopeSet(["api://todo/ToDoList.ReadWrite", "api://todo/ToDoList.Read", "api://todo/ToDoList.Read"])
        #expect(set.scopes == ["api://todo/ToDoList.Read", "api://todo/ToDoList.ReadWrite"])
        #expect(set.description == "api://todo/ToDoList.Read api://todo/ToDoList.ReadWrite")
    }

    @Test func equalSetsCompareAndHashEqual() {
        let a = ScopeSet(["Mail.Read", "User.Read"])
        let b = ScopeSet(["User.Read", "Mail.Read", "User.Read"])
        #expect(a == b)
        #expect(Set([a, b]).count == 1)
        #expect(a != ScopeSet(["User.Read"]))
    }

    @Test(arguments: [
        ("api://todo/ToDoList.Read", "api://todo", "ToDoList.Read"),
        ("https://graph.microsoft.com/.default", "https://graph.microsoft.com", ".default"),
        ("https://graph.microsoft.com/User.Read", "https://graph.microsoft.com", "User.Read"),
        ("User.Read", "https://graph.microsoft.com", "User.Read"),
        (".default", "https://graph.microsoft.com", ".default"),
        (
            "api://00000000-0000-0000-0000-000000000001/access_as_user", "api://00000000-0000-0000-0000-000000000001",
            "access_as_user"
        ),
        ("https://contoso.com/api/v2/Items.Read", "https://contoso.com/api/v2", "Items.Read"),
    ])
    func derivesResourceAndPermission(scope: String, resource: String, permission: String) {
        let set = ScopeSet([scope])
        #expect(set.resource == resource)
        #expect(set.permissions == [permission])
    }

    @Test func emptySetHasNoResource() {
        #expect(ScopeSet([]).resource == nil)
        #expect(ScopeSet([]).isEmpty)
        #expect(ScopeSet([]).description == "")
    }

    @Test func bareScopesShareGraphsResource() {
        let set = ScopeSet(["User.Read", "https://graph.microsoft.com/Mail.Read"])
        #expect(set.resources == [ScopeSet.defaultResource])
        #expect(set.resource == ScopeSet.defaultResource)
    }
}
