"""Money: offers, quotes, rent-versus-buy and bill audits. Knows nothing about transformers."""
