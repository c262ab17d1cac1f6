import sys

from moose.cli import main

sys.exit(main())
