from inspector.cli import main

raise SystemExit(main())
