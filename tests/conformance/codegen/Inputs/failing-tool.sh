#!/bin/sh
# Stands in for ptxas or fatbinary in tests: fails like they do.
echo "ptxas fatal   : Unresolved extern function 'missing'" >&2
exit 255
