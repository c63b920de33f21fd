"""The formats a transcript is read in: loading by sniffing in `reading` (`Formats`), the
shared parsing in `common`, the kinds of format in `kinds`, and the API bodies. Nothing is
imported here, so a module that needs only the parsing (the status line) loads no reader."""
