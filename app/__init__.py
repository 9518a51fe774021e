"""mnemo's HTTP surface: app factory, lifespan, settings, auth, routes."""
