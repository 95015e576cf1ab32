import Testing

@testable import SoStack

@Suite struct EgressPolicyTests {
    @Test func configValuesExpandAsComposeDoes() {
        let config = ["SET": "a.example", "EMPTY": "", "REGION": "eu-west-1", "ON": "1"]
        let cases: [(String, String)] = [
            ("${SET}", "a.example"),
            ("${UNSET}", ""),
            ("${EMPTY:-b.example}", "b.example"),
            ("${UNSET:-b.example}", "b.example"),
            ("${EMPTY-b.example}", ""),
            ("${UNSET-b.example}", "b.example"),
            ("${ON:+c.example}", "c.example"),
            ("${EMPTY:+c.example}", ""),
            ("${EMPTY+c.example}", "c.example"),
            ("${UNSET:+c.example}", ""),
            ("${ON:+bedrock-runtime.${REGION:-us-east-1}.amazonaws.com}", "bedrock-runtime.eu-west-1.amazonaws.com"),
            ("${ON:+bedrock-runtime.${UNSET:-us-east-1}.amazonaws.com}", "bedrock-runtime.us-east-1.amazonaws.com"),
            ("${UNSET:+bedrock-runtime.${REGION}.amazonaws.com}", ""),
            ("https://${SET}:8443/v1", "https://a.example:8443/v1"),
            ("${SET", "${SET"),
        ]
        for (raw, want) in cases {
            #expect(EgressPolicy.expand(raw, config: config) == want, "\(raw)")
        }
    }

    @Test func aGatewayURLBecomesItsAddressAndPort() {
        var policy = EgressPolicy()
        policy.entries = ["api.anthropic.com", "${ANTHROPIC_BASE_URL}", "${CLAUDE_CODE_USE_BEDROCK:+bedrock.example}"]
        let none = policy.targets(config: [:])
        #expect(none.hosts == ["api.anthropic.com"] && none.cidrs.isEmpty)
        let config = ["ANTHROPIC_BASE_URL": "http://10.250.0.1:4000"]
        let gateway = policy.targets(config: config)
        #expect(gateway.hosts == ["api.anthropic.com"] && gateway.cidrs == ["10.250.0.1/32"], "\(gateway)")
        #expect(policy.urlPorts(config: config) == ["10.250.0.1/32": [4000]])
        let named = policy.targets(config: ["ANTHROPIC_BASE_URL": "https://llm.corp.example/anthropic"])
        #expect(named.hosts == ["api.anthropic.com", "llm.corp.example"], "\(named)")
    }
}
