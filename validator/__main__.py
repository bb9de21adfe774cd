import sys

from validator.cli.main import main

sys.exit(main())
