import ArgumentParser

/// What the text-or-JSON verbs print.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}
