from zero9.cli import main

raise SystemExit(main())
