"""The window itself and its chrome: ``MainWindow`` (the one composition root: builds the
features, places them, connects their signals), the actions table (menus, toolbar), the centre
tabs, the status line, welcome/about/settings dialogs. Only this package knows every feature;
no feature imports it (docs/architecture.md)."""
