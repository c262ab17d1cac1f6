"""Subcommands of `moose`; each module defines `add_parser(subparsers)`."""
