/// The one rule for a tenant, wherever one comes in (an authority's tenant segment, `token
/// --tenant`, az's `--tenant`, azd's `tenantId`): a tenant ID (a GUID), a domain name
/// (`contoso.onmicrosoft.com`: letters, digits and `-` in dot-separated labels of 1 to 63,
/// no label starting or ending with `-`), or `common`, `organizations`, `consumers` (single
/// labels, as a GUID is). `.`, `..`, empty labels, `%`, `/`, `\` and the rest are refused:
/// a tenant becomes a path segment of the authority, and `..` there escapes it.
public enum TenantName {
    /// Why `tenant` is not a tenant, in words; `nil` when it is one.
    public static func problem(_ tenant: String) -> String? {
        isValid(tenant)
            ? nil
            : "'\(tenant.prefix(80))' is not a tenant: give its ID (a GUID), a domain name (contoso.onmicrosoft.com), "
                + "or common, organizations or consumers"
    }

    /// Whether `tenant` is a tenant ID, a domain name or a well-known tenant.
    public static func isValid(_ tenant: String) -> Bool {
        let bytes = tenant.utf8
        guard (1...253).contains(bytes.count) else { return false }
        return bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).allSatisfy(isLabel)
    }

    private static func isLabel(_ label: Substring.UTF8View) -> Bool {
        guard (1...63).contains(label.count), label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-") else { return false }
        return label.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-")
        }
    }

    /// Whether an authority's path segment is `.` or `..` (also written `%2e`): a relative step
    /// the URL's reader would take, so the request would go elsewhere on the host.
    public static func isDotSegment(_ segment: some StringProtocol) -> Bool {
        var rest = Substring(segment.lowercased())
        var dots = 0
        while !rest.isEmpty {
            if rest.hasPrefix(".") {
                rest = rest.dropFirst()
            } else if rest.hasPrefix("%2e") {
                rest = rest.dropFirst(3)
            } else {
                return false
            }
            dots += 1
        }
        return dots == 1 || dots == 2
    }
}
