"""The published benchmark's experiments: ``catalog`` names the studies, ``sweep`` runs a grid of
runs into one study dataset."""
