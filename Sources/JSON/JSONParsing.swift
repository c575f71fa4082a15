import CJansson

extension JSONValue {
    /// The nesting depth accepted by default; deeper input is rejected, never recursed into.
    public static let defaultMaxDepth = 512

    /// Parses `bytes` strictly: exactly one JSON value (any type) with only whitespace around
    /// it; invalid UTF-8, duplicate object keys, integers outside `Int64` and nesting deeper
    /// than `maxDepth` are errors.
    ///
    /// - Complexity: O(n) in the size of the input.
    public static func parse(
        _ raw: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth
    ) throws(JSONParseError) -> JSONValue {
        guard let base = raw.baseAddress, raw.count > 0 else {
            throw JSONParseError(message: "empty input", position: 0)
        }
        // A raw NUL is never valid JSON text, but jansson drops one that directly follows a
        // number or a literal (it ungets the byte, then reads a NUL as "refill"): `4\0,`.
        if let nul = raw.firstIndex(of: 0) {
            throw JSONParseError(message: "a NUL byte outside a string", position: nul)
        }
        var error = json_error_t()
        let result: Result<JSONValue, JSONParseError> = {
            guard
                let root = json_loadb(
                    base.assumingMemoryBound(to: CChar.self), raw.count, cjansson_strict_decode_flags(), &error)
            else {
                let text = String(cString: cjansson_error_text(&error))
                return .failure(JSONParseError(message: text, position: Int(error.position)))
            }
            defer { json_decref(root) }
            guard let value = JanssonReader(maxDepth: maxDepth).value(of: root, depth: 1) else {
                return .failure(
                    JSONParseError(
                        message: "nesting deeper than \(maxDepth) levels", position: 0))
            }
            return .success(value)
        }()
        return try result.get()
    }

    /// Parses bytes; see ``parse(_:maxDepth:)``.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) in try parse(raw, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// Parses bytes; see ``parse(_:maxDepth:)``.
    public static func parse(_ bytes: ArraySlice<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) in try parse(raw, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// Parses a string; see ``parse(_:maxDepth:)``.
    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}

/// Converts a jansson tree into ``JSONValue``, refusing trees deeper than `maxDepth`.
struct JanssonReader {
    let maxDepth: Int

    func value(of json: UnsafeMutablePointer<json_t>, depth: Int) -> JSONValue? {
        switch cjansson_typeof(json) {
        case JSON_NULL: return .null
        case JSON_TRUE: return .bool(true)
        case JSON_FALSE: return .bool(false)
        case JSON_INTEGER: return .int(Int64(json_integer_value(json)))
        case JSON_REAL: return .double(json_real_value(json))
        case JSON_STRING: return .string(string(of: json))
        case JSON_ARRAY: return depth > maxDepth ? nil : array(of: json, depth: depth)
        case JSON_OBJECT: return depth > maxDepth ? nil : object(of: json, depth: depth)
        default: return nil
        }
    }

    private func string(of json: UnsafeMutablePointer<json_t>) -> String {
        guard let chars = json_string_value(json) else { return "" }
        let buffer = UnsafeRawBufferPointer(start: chars, count: json_string_length(json))
        return String(decoding: buffer, as: UTF8.self)
    }

    private func array(of json: UnsafeMutablePointer<json_t>, depth: Int) -> JSONValue? {
        let count = json_array_size(json)
        var elements: [JSONValue] = []
        elements.reserveCapacity(count)
        for index in 0..<count {
            guard let element = json_array_get(json, index),
                let value = value(of: element, depth: depth + 1)
            else { return nil }
            elements.append(value)
        }
        return .array(elements)
    }

    private func object(of json: UnsafeMutablePointer<json_t>, depth: Int) -> JSONValue? {
        var object = JSONObject(minimumCapacity: json_object_size(json))
        var iterator = json_object_iter(json)
        while let current = iterator {
            guard let keyChars = json_object_iter_key(current),
                let member = json_object_iter_value(current),
                let value = value(of: member, depth: depth + 1)
            else { return nil }
            let keyBytes = UnsafeRawBufferPointer(
                start: keyChars, count: json_object_iter_key_len(current))
            object[String(decoding: keyBytes, as: UTF8.self)] = value
            iterator = json_object_iter_next(json, current)
        }
        return .object(object)
    }
}
